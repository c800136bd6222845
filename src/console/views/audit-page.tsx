/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import type { Receipt } from "../../wire/audit";
import type { EnvironmentName } from "../../wire/envelope";
import { formatTimestamp } from "../format";
import { plural } from "../plural";
import { FilterForm, type FilterFormProps } from "./filter-form";
import { Badge, Layout } from "./layout";
import { ShortId } from "./short-id";

export interface AuditPageProps extends Pick<FilterFormProps, "values" | "tools" | "problems"> {
  environment: EnvironmentName;
  session: SignedInOperator;
  receipts: Receipt[];
  /** The first page of the same search, when this is a later one. */
  first: string | null;
  next: string | null;
  /** The same search as an NDJSON export, for `npm run audit -- verify`. */
  exportHref: string;
}

/** What a receipt came to, in a word: a write's outcome, else the approval's state. */
export function receiptOutcome(receipt: Receipt): string {
  return receipt.upstream?.outcome ?? receipt.approval?.state ?? "";
}

/** Who made the decision, as a reader names them. */
export function actorOf(receipt: Receipt): string {
  const { actor } = receipt;
  if (actor.kind === "operator") return actor.name ?? actor.id ?? "an operator";
  return actor.kind === "agent" ? "the agent" : "the proxy";
}

/** The tenant's audit log: every effect decision as a signed receipt, oldest first, filtered and paged. */
export const AuditPage: FC<AuditPageProps> = (props) => (
  <Layout title="Audit log" environment={props.environment} session={props.session} section="audit">
    <h1>Audit log</h1>
    <p class="lede">
      One signed receipt per effect decision of <strong>{props.session.tenant}</strong>'s runs: each write's
      outcome and each approval decision, chained so that no receipt can be changed, removed or moved unseen.
    </p>
    <FilterForm
      action="/console/audit"
      fields={["tool", "run_id", "operator", "since", "until"]}
      values={props.values}
      states={[]}
      tools={props.tools}
      problems={props.problems}
    />
    <p>
      <a class="button secondary" href={props.exportHref} download>
        Export these receipts (NDJSON)
      </a>{" "}
      <span class="hint">
        Check an export offline: <code>npm run audit -- verify &lt;file&gt; --keys audit-jwks.json</code>,
        with the keys from <a href="/.well-known/audit-jwks.json">/.well-known/audit-jwks.json</a>.
      </span>
    </p>
    {props.problems.length > 0 ? null : props.receipts.length === 0 ? (
      <p class="card empty">No receipts match.</p>
    ) : (
      <table class="stack">
        <caption>{plural(props.receipts.length, "receipt")}, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Decided</th>
            <th scope="col">Decision</th>
            <th scope="col">Tool</th>
            <th scope="col">Run</th>
            <th scope="col">By</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {props.receipts.map((receipt) => (
            <tr>
              <th scope="row" data-label="#">
                <a href={`/console/audit/${receipt.seq}`}>{receipt.seq}</a>
              </th>
              <td data-label="Decided">{formatTimestamp(receipt.at)}</td>
              <td data-label="Decision">
                <code>{receipt.type}</code>
              </td>
              <td data-label="Tool">{receipt.tool ? <code>{receipt.tool.name}</code> : null}</td>
              <td data-label="Run">
                <a href={`/console/runs/${encodeURIComponent(receipt.run_id)}`}>
                  <ShortId id={receipt.run_id} />
                </a>
              </td>
              <td data-label="By">{actorOf(receipt)}</td>
              <td data-label="Outcome">
                {receiptOutcome(receipt) ? <Badge value={receiptOutcome(receipt)} /> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    {props.first || props.next ? (
      <nav class="pager" aria-label="Pages">
        {props.first ? <a href={props.first}>← Oldest</a> : null}
        {props.next ? (
          <a href={props.next} rel="next">
            Newer →
          </a>
        ) : null}
      </nav>
    ) : null}
  </Layout>
);
