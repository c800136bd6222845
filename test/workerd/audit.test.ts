import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { createLocalJWKSet } from "jose/jwks/local";
import { describe, expect, it } from "vitest";
import { verifyExport } from "../../src/audit/verify";
import type { Receipt } from "../../src/wire/audit";
import { signedInOperator } from "./console-client";
import {
  ACME_OPERATORS,
  askAcmeRefund,
  asOperator,
  callTool,
  decide,
  ledgerStubOf,
  OPERATOR_KEYS,
  openRun,
  refund,
  refundSentThenLost,
  refundsOfRun,
  request,
} from "./helpers";

/**
 * The tenant's audit log (docs/audit.md) through the operator API: every effect decision of a run
 * is one receipt, chained and signed, and an export verifies offline with the published keys.
 */

type Tenant = keyof typeof OPERATOR_KEYS;

/** The receipts of one run, as the operator API lists them, oldest first. */
async function receiptsOf(runId: string, tenant: Tenant = "acme"): Promise<Receipt[]> {
  const { status, body } = await asOperator(`/v1/audit?run_id=${runId}&limit=100`, {}, tenant);
  expect(status, JSON.stringify(body.error)).toBe(200);
  return (body.data as { receipts: Receipt[] }).receipts;
}

/** The tenant's whole log as NDJSON, as `npm run audit -- verify` is given it. */
async function exportOf(tenant: Tenant, query = ""): Promise<string> {
  const response = await exports.default.fetch(
    new Request(`https://proxy.test/v1/audit?format=ndjson${query}`, {
      headers: { authorization: `Bearer ${OPERATOR_KEYS[tenant]}` },
    }),
  );
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("application/x-ndjson");
  return new TextDecoder().decode(await response.arrayBuffer());
}

/** The published audit keys, as anyone fetches them. */
async function publishedKeys() {
  const response = await exports.default.fetch(new Request("https://proxy.test/.well-known/audit-jwks.json"));
  expect(response.status).toBe(200);
  const jwks = (await response.json()) as { keys: Array<Record<string, unknown>> };
  expect(jwks.keys.every((key) => !("d" in key))).toBe(true);
  // The key that signs, and a retired one kept so what it signed before the rotation still verifies.
  expect(jwks.keys.map((key) => key.kid)).toEqual(["audit-demo-2026-11", "audit-demo-2026-08"]);
  return createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
}

function approveAs(who: keyof typeof ACME_OPERATORS, id: string, body: Record<string, unknown>) {
  return request(`/v1/approvals/${id}/approve`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACME_OPERATORS[who]}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("the audit log's receipts", () => {
  it("records a refund's two-person approval with an edit: the edit, the approval, and what the upstream did", async () => {
    const { run, id } = await askAcmeRefund("A1004", 35_000);
    // Dana lowers the amount: still above the two-person line, her approval is the first of two.
    const edited = await approveAs("dana", id, { reason: "partial", args: refund("A1004", 32_000) });
    expect(edited.status, JSON.stringify(edited.body.error)).toBe(200);
    const approved = await approveAs("lee", id, { reason: "checked", confirm_duplicate: true });
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    const [made] = await refundsOfRun("A1004", run);

    const receipts = await receiptsOf(run.id);
    expect(receipts.map((receipt) => receipt.type)).toEqual([
      "approval.edited",
      "approval.approved",
      "effect.outcome",
    ]);
    const [edit, approval, outcome] = receipts as [Receipt, Receipt, Receipt];
    expect(edit).toMatchObject({
      tenant: "acme",
      run_id: run.id,
      agent_profile: null,
      end_user: null,
      actor: { kind: "operator", name: "Dana Reyes" },
      tool: {
        name: "issue_refund",
        namespace: "support",
        side_effect: "destructive",
        // The refund's own version, as the run pinned it when the call was admitted.
        contract: { kind: "tool_version", digest: expect.stringMatching(/^tv_/) },
      },
      call: { args: refund("A1004", 32_000) },
      approval: {
        id,
        state: "pending",
        roles: ["finance_lead"],
        approvals_required: 2,
        edit: { by_name: "Dana Reyes", fields: ["amount_cents"], asked_args: refund("A1004", 35_000) },
        overrides: { cap: null, earlier_effects: 0, duplicate_confirmed: false },
      },
      upstream: null,
    });
    expect(approval).toMatchObject({
      actor: { kind: "operator", name: "Lee Park" },
      approval: {
        state: "approved",
        decided_by_name: "Lee Park",
        reason: "checked",
        approvers: [{ name: "Dana Reyes" }, { name: "Lee Park" }],
        seen: { args_digest: edit.call?.args_digest },
        overrides: { duplicate_confirmed: true },
      },
    });
    expect(outcome).toMatchObject({
      actor: { kind: "operator", name: "Lee Park" },
      call: { idempotency_key: approval.call?.idempotency_key, args: refund("A1004", 32_000) },
      approval: { state: "executed" },
      upstream: {
        outcome: "made",
        status: 201,
        error_code: null,
        external_id: made?.refund_id,
        settled_after_doubt: false,
      },
      read_back: { kind: "postcondition", verdict: "held" },
    });
    expect(outcome.upstream?.answer_digest).toMatch(/^[0-9a-f]{64}$/);
    // One chain: each receipt follows the one before it.
    expect(approval.seq).toBe(edit.seq + 1);
    expect(outcome.prev).toBe(approval.hash);
  });

  it("records a write the upstream refused, and a rejection, each once", async () => {
    // globex executes refunds up to 1000 cents itself; B2004 is fully refunded, so the upstream refuses.
    const run = await openRun("globex");
    const refused = await callTool(run, "issue_refund", refund("B2004", 500));
    expect(refused.body.error?.side_effect_confirmed).toBe(false);
    // Asking again replays the stored answer: a replay is no new decision.
    await callTool(run, "issue_refund", refund("B2004", 500));
    const { run: asked, id } = await askAcmeRefund("A1002", 1_500);
    expect((await decide(id, "reject", "not this order")).status).toBe(200);

    const [receipt, ...more] = await receiptsOf(run.id, "globex");
    expect(more).toEqual([]);
    expect(receipt).toMatchObject({
      type: "effect.outcome",
      actor: { kind: "agent", id: null },
      approval: null,
      upstream: { outcome: "not_made", status: 422, error_code: refused.body.error?.code },
      read_back: null,
    });
    expect(await receiptsOf(asked.id)).toMatchObject([
      {
        type: "approval.rejected",
        actor: { name: "Dana Reyes" },
        approval: { state: "rejected", reason: "not this order" },
      },
    ]);
  });

  it("records a send a restart cut off as reconciled in doubt, then the resend that settles it", async () => {
    const run = await openRun("globex");
    const args = { order_id: "B2002", amount_cents: 130, reason: "user_cancel" };
    const { key, refundId } = await refundSentThenLost(run, args);
    // The alarm that looks for sends cut off, rung now rather than when it is due.
    await runInDurableObject(ledgerStubOf(run), (_instance, state) =>
      state.storage.setAlarm(Date.now() + 60_000),
    );
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    const settled = await callTool(run, "issue_refund", args);
    expect(settled.body.outcome, JSON.stringify(settled.body.error)).toBe("success");

    expect(await receiptsOf(run.id, "globex")).toMatchObject([
      {
        type: "effect.reconciled",
        actor: { kind: "proxy" },
        call: { idempotency_key: key },
        upstream: { outcome: "in_doubt", status: null, settled_after_doubt: false },
      },
      {
        type: "effect.outcome",
        actor: { kind: "agent" },
        call: { idempotency_key: key, args },
        upstream: { outcome: "made", external_id: refundId, settled_after_doubt: true },
      },
    ]);
  });

  it("exports the tenant's chain as NDJSON that verifies with the published keys, and names a tampered line", async () => {
    const { id } = await askAcmeRefund("A1001", 1_200);
    await decide(id, "approve", "ok", "acme", { confirm_duplicate: true });
    const text = await exportOf("acme");
    const keys = await publishedKeys();
    const verdict = await verifyExport(text, keys);
    expect(verdict).toMatchObject({ ok: true, first_seq: 1, tenant: "acme" });
    const lines = text.trimEnd().split("\n");
    const [first] = lines.map((line) => JSON.parse(line) as Receipt);
    const header = JSON.parse(
      atob((first?.sig.split(".")[0] ?? "").replaceAll("-", "+").replaceAll("_", "/")),
    ) as Record<string, unknown>;
    expect(header).toEqual({ alg: "EdDSA", kid: "audit-demo-2026-11", typ: "audit-receipt+jws" });
    expect(verdict.ok && verdict.receipts).toBe(lines.length);

    const changed = [...lines];
    changed[1] = (changed[1] ?? "").replace('"tenant":"acme"', '"tenant":"acmf"');
    expect(await verifyExport(`${changed.join("\n")}\n`, keys)).toMatchObject({ ok: false, line: 2, seq: 2 });
    const without = [lines[0], ...lines.slice(2)];
    expect(await verifyExport(`${without.join("\n")}\n`, keys)).toMatchObject({ ok: false, line: 2, seq: 2 });
  });

  it("records what the deciding operator saw: the digest of the decision context the console showed", async () => {
    const { run, id } = await askAcmeRefund("A1003", 260);
    const operator = await signedInOperator();
    const page = await operator.get(`/console/approvals/${id}`);
    expect(page.html).toContain("What you are deciding on");
    const seen = /name="context_digest" value="([0-9a-f]{64})"/.exec(page.html)?.[1];
    expect(seen).toBeDefined();
    const rejected = await operator.post(`/console/approvals/${id}/reject`, {
      csrf: operator.csrf,
      reason: "already refunded in full",
      context_digest: seen ?? "",
    });
    expect(rejected.status).toBe(303);
    expect(await receiptsOf(run.id)).toMatchObject([
      { type: "approval.rejected", approval: { seen: { context_digest: seen } } },
    ]);
    // The operator API takes the same digest, and refuses anything else, naming the field.
    const { id: other } = await askAcmeRefund("A1002", 270);
    const refused = await asOperator(`/v1/approvals/${other}/reject`, {
      method: "POST",
      body: JSON.stringify({ reason: "no", context_digest: "seen it" }),
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error?.problems).toEqual([expect.objectContaining({ field: "context_digest" })]);
  });
});
