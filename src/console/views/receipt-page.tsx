/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import type { Receipt } from "../../wire/audit";
import type { EnvironmentName } from "../../wire/envelope";
import { formatTimestamp } from "../format";
import { actorOf, receiptOutcome } from "./audit-page";
import { Badge, Layout } from "./layout";

/** One receipt of the audit log: what was decided, by whom, what the upstream did, and its place in the chain. */
export const ReceiptPage: FC<{
  environment: EnvironmentName;
  session: SignedInOperator;
  receipt: Receipt;
}> = ({ environment, session, receipt }) => {
  const { approval, upstream, call } = receipt;
  return (
    <Layout title={`Receipt ${receipt.seq}`} environment={environment} session={session} section="audit">
      <p>
        <a href="/console/audit">← Audit log</a>
      </p>
      <h1>
        Receipt {receipt.seq}: <code>{receipt.type}</code>
      </h1>
      <section aria-labelledby="decision-heading" class="card">
        <h2 id="decision-heading">The decision</h2>
        <dl class="facts">
          <dt>Decided</dt>
          <dd>{formatTimestamp(receipt.at)}</dd>
          <dt>By</dt>
          <dd>{actorOf(receipt)}</dd>
          <dt>Run</dt>
          <dd>
            <a href={`/console/runs/${encodeURIComponent(receipt.run_id)}`}>
              <code>{receipt.run_id}</code>
            </a>
            {receipt.agent_profile ? (
              <>
                {" "}
                (agent profile <code>{receipt.agent_profile}</code>)
              </>
            ) : null}
          </dd>
          {receipt.tool ? (
            <>
              <dt>Tool</dt>
              <dd>
                <code>
                  {receipt.tool.namespace}.{receipt.tool.name}
                </code>{" "}
                ({receipt.tool.side_effect}; contract of catalog <code>{receipt.tool.contract.digest}</code>)
              </dd>
            </>
          ) : null}
          {call?.idempotency_key ? (
            <>
              <dt>Idempotency key</dt>
              <dd>
                <code>{call.idempotency_key}</code>
              </dd>
            </>
          ) : null}
          {receiptOutcome(receipt) ? (
            <>
              <dt>Outcome</dt>
              <dd>
                <Badge value={receiptOutcome(receipt)} />
              </dd>
            </>
          ) : null}
          {upstream ? (
            <>
              <dt>Upstream</dt>
              <dd>
                status {upstream.status ?? "none"}
                {upstream.external_id ? (
                  <>
                    , id <code>{upstream.external_id}</code>
                  </>
                ) : null}
                {upstream.error_code ? (
                  <>
                    , <code>{upstream.error_code}</code>
                  </>
                ) : null}
                {upstream.settled_after_doubt ? ", settled after doubt" : null}
              </dd>
            </>
          ) : null}
          {receipt.read_back ? (
            <>
              <dt>Read back</dt>
              <dd>
                {receipt.read_back.kind}: <code>{receipt.read_back.verdict}</code>
              </dd>
            </>
          ) : null}
          {approval ? (
            <>
              <dt>Approval</dt>
              <dd>
                <a href={`/console/approvals/${encodeURIComponent(approval.id)}`}>
                  <code>{approval.id}</code>
                </a>{" "}
                ({approval.state}
                {approval.approvers.length > 0
                  ? `; approved by ${approval.approvers.map((who) => who.name ?? who.operator).join(" and ")}`
                  : ""}
                {approval.edit ? `; edited by ${approval.edit.by_name ?? approval.edit.by}` : ""})
              </dd>
            </>
          ) : null}
        </dl>
      </section>
      <section aria-labelledby="chain-heading" class="card">
        <h2 id="chain-heading">Its place in the chain</h2>
        <dl class="facts">
          <dt>Hash</dt>
          <dd>
            <code>{receipt.hash}</code>
          </dd>
          <dt>Follows</dt>
          <dd>
            <code>{receipt.prev}</code>
          </dd>
          <dt>Written</dt>
          <dd>{formatTimestamp(receipt.recorded_at)}</dd>
        </dl>
      </section>
      <section aria-labelledby="raw-heading">
        <h2 id="raw-heading">The receipt as signed</h2>
        <pre class="receipt">{JSON.stringify(receipt, null, 2)}</pre>
      </section>
    </Layout>
  );
};
