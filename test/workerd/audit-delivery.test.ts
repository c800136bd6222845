import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { createLocalJWKSet } from "jose/jwks/local";
import { afterEach, describe, expect, it } from "vitest";
import { verifyExport } from "../../src/audit/verify";
import { operatorIdOf } from "../../src/auth/operator-id";
import { parseUpstreamSigningKeys, publicJwks } from "../../src/config/signing-keys";
import { auditLogOf, pushIdOf } from "../../src/ledger/audit-log";
import { RETENTION_MS } from "../../src/ledger/run-ledger";
import type { Receipt } from "../../src/wire/audit";
import {
  asOperator,
  callTool,
  expectQueryRefused,
  failWebhookDeliveries,
  KEYS,
  ledgerStubOf,
  OPERATOR_KEYS,
  openRun,
  outboxTopicsOf,
  refund,
  request,
  restartDurableObject,
  type TestRun,
  webhookLog,
} from "./helpers";

/**
 * How receipts reach the audit log and leave it: through the run's outbox (a log that is down, or a
 * ledger that dies between its commit and the delivery, delays a receipt and never loses or repeats
 * one), to the tenant's endpoint in signed batches (retried under the same id until acknowledged),
 * out after the tenant's retention, and to operators of that tenant only.
 */

type Tenant = keyof typeof OPERATOR_KEYS;
const DAY_MS = 24 * 60 * 60 * 1000;

const keys = createLocalJWKSet(
  publicJwks(parseUpstreamSigningKeys("AUDIT_SIGNING_KEYS", env.AUDIT_SIGNING_KEYS)),
);

async function exportOf(tenant: Tenant, query = ""): Promise<string> {
  const response = await exports.default.fetch(
    new Request(`https://proxy.test/v1/audit?format=ndjson${query}`, {
      headers: { authorization: `Bearer ${OPERATOR_KEYS[tenant]}` },
    }),
  );
  expect(response.status).toBe(200);
  return new TextDecoder().decode(await response.arrayBuffer());
}

const receiptsIn = (text: string): Receipt[] =>
  text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Receipt);

/** Tenants whose audit log a test made fail, brought back after it whatever its result. */
const failing = new Set<Tenant>();

/** The tenant's audit log refuses every receipt until it restarts, as one that is down would. */
async function failAuditLog(tenant: Tenant): Promise<void> {
  failing.add(tenant);
  await runInDurableObject(auditLogOf(env, tenant), (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    sql.exec = ((query: string, ...bindings: SqlStorageValue[]) => {
      if (/^\s*INSERT INTO receipts\b/.test(query)) throw new Error("test: the audit log is down");
      return exec(query, ...bindings);
    }) as typeof sql.exec;
  });
}

async function recoverAuditLog(tenant: Tenant): Promise<void> {
  failing.delete(tenant);
  await restartDurableObject(auditLogOf(env, tenant));
}

afterEach(async () => {
  for (const tenant of failing) await recoverAuditLog(tenant);
});

const smallRefund = (run: TestRun, order: string, amount: number) =>
  callTool(run, "issue_refund", { order_id: order, amount_cents: amount, reason: "user_cancel" });

/** A write globex's agents make without a human, as often as a test needs: a ticket about something new. */
async function ticket(run: TestRun, note: string): Promise<void> {
  const made = await callTool(run, "create_internal_ticket", {
    customer_id: "C201",
    priority: "low",
    summary: `Audit test: ${note} ${crypto.randomUUID()}`,
  });
  expect(made.body.outcome, JSON.stringify(made.body.error)).toBe("success");
}

/** Rings a Durable Object's alarm until `done` holds: it may have rung on its own meanwhile. */
async function ringUntil(stub: DurableObjectStub, done: () => Promise<boolean>): Promise<void> {
  for (let ring = 0; ring < 20; ring++) {
    if (await done()) return;
    await runDurableObjectAlarm(stub);
  }
  expect(await done()).toBe(true);
}

describe("receipts on their way to the audit log", () => {
  it("waits in the run's outbox while the log is down, through a restart of the ledger, and arrives once", async () => {
    const run = await openRun("globex");
    await failAuditLog("globex");
    const made = await smallRefund(run, "B2003", 140);
    // The refund is the agent's answer; the log being down is the ledger's to retry.
    expect(made.body.outcome, JSON.stringify(made.body.error)).toBe("success");
    expect((await outboxTopicsOf(run)).filter((topic) => topic.startsWith("audit:"))).toHaveLength(1);
    expect(receiptsIn(await exportOf("globex", `&run_id=${run.id}`))).toEqual([]);

    // The ledger dies with the receipt undelivered; the log comes back.
    await restartDurableObject(ledgerStubOf(run));
    await recoverAuditLog("globex");
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    const [receipt, ...more] = receiptsIn(await exportOf("globex", `&run_id=${run.id}`));
    expect(more).toEqual([]);
    expect(receipt).toMatchObject({ type: "effect.outcome", upstream: { outcome: "made" } });
    expect((await outboxTopicsOf(run)).filter((topic) => topic.startsWith("audit:"))).toEqual([]);

    // A delivery repeated after its answer was lost changes nothing: the id is held.
    const {
      hash: _hash,
      sig: _sig,
      v: _v,
      tenant: _tenant,
      seq: _seq,
      prev: _prev,
      recorded_at: _at,
      ...event
    } = receipt as Receipt;
    const upstream = { ...event.upstream, answer: null } as unknown as NonNullable<Receipt["upstream"]>;
    await auditLogOf(env, "globex").append("globex", [{ ...event, upstream } as never]);
    expect(receiptsIn(await exportOf("globex", `&run_id=${run.id}`))).toHaveLength(1);
    expect(await verifyExport(await exportOf("globex"), keys)).toMatchObject({ ok: true });
  });

  it("keeps a run's storage past its retention until the log has its receipts, and its receipts after it", async () => {
    // A task's run is stored at its open, so its stored clock can be moved past retention.
    const run = await openRun("acme", { namespace: "support", task_key: `audit-${crypto.randomUUID()}` });
    const asked = await callTool(run, "issue_refund", refund("A1005", 1_900));
    expect(asked.body.error?.code).toBe("approval_required");
    // Ending the run expires its approval: a receipt the log, down now, does not take.
    await failAuditLog("acme");
    const ended = await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect(ended.status).toBe(200);
    await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET ended_at = ?", Date.now() - RETENTION_MS - 1_000);
    });
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    const statusOf = async () =>
      (await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } })).status;
    expect(await statusOf()).toBe(200);

    // The log is back: the receipt arrives, then the run's trace and keys are deleted.
    await recoverAuditLog("acme");
    await ringUntil(ledgerStubOf(run), async () => (await statusOf()) === 404);
    const receipts = receiptsIn(await exportOf("acme", `&run_id=${run.id}`));
    expect(receipts).toMatchObject([
      { type: "approval.expired", actor: { kind: "proxy" }, approval: { reason: "the run was ended" } },
    ]);
    // The trace expired; the audit holds what it held, and still verifies.
    expect(receiptsIn(await exportOf("acme", `&run_id=${run.id}`))).toEqual(receipts);
    expect(await verifyExport(await exportOf("acme"), keys)).toMatchObject({ ok: true });
  });
});

describe("the tenant's endpoint", () => {
  it("gets every receipt in signed batches, each retried under its id until acknowledged", async () => {
    const log = auditLogOf(env, "globex");
    const head = (await log.head("globex"))?.seq ?? 0;
    const firstBatch = pushIdOf("globex", { first: head + 1, last: head + 1 });
    await failWebhookDeliveries(firstBatch, 2);
    const run = await openRun("globex");
    await ticket(run, "first");
    await ticket(run, "second");
    const delivered = async () =>
      (await webhookLog()).notifications.some((entry) => entry.webhook_id === firstBatch);
    await ringUntil(log, delivered);
    const { notifications, rejections } = await webhookLog();
    const batches = notifications.filter((entry) => entry.webhook_id?.startsWith("audit_globex_"));
    expect(batches.every((entry) => entry.verified)).toBe(true);
    expect(batches.filter((entry) => entry.webhook_id === firstBatch)).toMatchObject([{ redeliveries: 0 }]);
    expect(rejections.filter((entry) => entry.webhook_id === firstBatch).map((entry) => entry.code)).toEqual([
      "receiver_unavailable",
      "receiver_unavailable",
    ]);
    // Every receipt of the log went out once, in order, as the log wrote it.
    const exported = receiptsIn(await exportOf("globex"));
    const pushedReceipts = async () =>
      (await webhookLog()).notifications
        .filter((entry) => entry.webhook_id?.startsWith("audit_globex_"))
        .flatMap((entry) => (entry.body as unknown as { receipts: Receipt[] }).receipts);
    await ringUntil(log, async () => (await pushedReceipts()).length >= exported.length);
    const pushed = await pushedReceipts();
    expect(pushed.map((receipt) => receipt.seq)).toEqual(exported.map((receipt) => receipt.seq));
    expect(pushed).toEqual(exported);
  });
});

describe("retention", () => {
  it("deletes receipts past the tenant's retention, and the chain goes on from its head", async () => {
    const run = await openRun("globex");
    await ticket(run, "to expire");
    const log = auditLogOf(env, "globex");
    const head = await log.head("globex");
    // Written more than the default 400 days ago.
    await runInDurableObject(log, (_instance, state) => {
      state.storage.sql.exec("UPDATE receipts SET recorded_at = ?", Date.now() - 401 * DAY_MS);
    });
    expect(await runDurableObjectAlarm(log)).toBe(true);
    expect(receiptsIn(await exportOf("globex"))).toEqual([]);
    await ticket(run, "after the expiry");
    const [next] = receiptsIn(await exportOf("globex"));
    expect(next).toMatchObject({ seq: (head?.seq ?? 0) + 1, prev: head?.hash });
    const alarm = await runInDurableObject(log, (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThan(Date.now() + 399 * DAY_MS);
  });
});

describe("who reads the audit log", () => {
  it("shows an operator their own tenant's receipts only", async () => {
    const acme = await openRun("acme");
    const globex = await openRun("globex");
    await smallRefund(globex, "B2002", 180);
    const asked = await callTool(acme, "issue_refund", refund("A1002", 1_800));
    await asOperator(`/v1/approvals/${asked.body.approval?.id}/reject`, {
      method: "POST",
      body: JSON.stringify({ reason: "no" }),
    });
    const acmeExport = await exportOf("acme");
    const globexExport = await exportOf("globex");
    expect(acmeExport).toContain(acme.id);
    expect(globexExport).not.toContain(acme.id);
    expect(acmeExport).not.toContain(globex.id);
    const { body } = await asOperator(`/v1/audit?run_id=${acme.id}`, {}, "globex");
    expect(body.data).toEqual({ receipts: [], next_cursor: null });
    expect(
      await auditLogOf(env, "acme").page("globex", {
        since: null,
        until: null,
        tool: null,
        run_id: null,
        operator: null,
        after: 0,
        limit: 10,
      }),
    ).toEqual({ receipts: [], next_after: null });
  });

  it("refuses every credential but an operator key", async () => {
    const run = await openRun("acme");
    for (const token of [run.token, KEYS.acme]) {
      const { status, body } = await request("/v1/audit", { headers: { authorization: `Bearer ${token}` } });
      expect(status).toBe(403);
      expect(body.error?.code).toBe("permission_error");
    }
    expect((await request("/v1/audit")).status).toBe(401);
  });

  it("pages with a cursor and filters by tool and operator", async () => {
    const run = await openRun("globex");
    for (const note of ["one", "two", "three"]) await ticket(run, note);
    const first = await asOperator(`/v1/audit?run_id=${run.id}&limit=2`, {}, "globex");
    const page = first.body.data as { receipts: Receipt[]; next_cursor: string };
    expect(page.receipts).toHaveLength(2);
    const second = await asOperator(
      `/v1/audit?run_id=${run.id}&limit=2&cursor=${page.next_cursor}`,
      {},
      "globex",
    );
    expect(second.body.data).toMatchObject({
      receipts: [{ call: { args: { summary: expect.stringContaining("three") } } }],
      next_cursor: null,
    });
    const tickets = await asOperator(`/v1/audit?tool=create_internal_ticket&run_id=${run.id}`, {}, "globex");
    expect((tickets.body.data as { receipts: Receipt[] }).receipts).toHaveLength(3);
    const reads = await asOperator("/v1/audit?tool=lookup_order", {}, "globex");
    expect(reads.body.data).toEqual({ receipts: [], next_cursor: null });
    const later = await asOperator(
      `/v1/audit?run_id=${run.id}&since=${new Date(Date.now() + 60_000).toISOString()}`,
      {},
      "globex",
    );
    expect(later.body.data).toEqual({ receipts: [], next_cursor: null });
  });

  it("finds what one operator decided", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1003", 1_700));
    await asOperator(`/v1/approvals/${asked.body.approval?.id}/reject`, {
      method: "POST",
      body: JSON.stringify({ reason: "refunded already" }),
    });
    const dana = await operatorIdOf(OPERATOR_KEYS.acme);
    const { body } = await asOperator(`/v1/audit?operator=${dana}&run_id=${run.id}`);
    expect((body.data as { receipts: Receipt[] }).receipts).toMatchObject([
      { type: "approval.rejected", approval: { decided_by: dana } },
    ]);
    const other = await asOperator(`/v1/audit?operator=operator:0123456789ab&run_id=${run.id}`);
    expect(other.body.data).toEqual({ receipts: [], next_cursor: null });
  });

  it.each([
    ["/v1/audit?since=yesterday", "query.since", "not an ISO 8601"],
    ["/v1/audit?since=2026-02-01&until=2026-01-01", "query.until", "must be later than since"],
    ["/v1/audit?cursor=abc", "query.cursor", "not a cursor"],
    ["/v1/audit?operator=dana", "query.operator", "not an operator id"],
    ["/v1/audit?run_id=other", "query.run_id", "not a run id"],
    ["/v1/audit?limit=0", "query.limit", "must be at least 1"],
    ["/v1/audit?format=csv", "query.format", ""],
    ["/v1/audit?tenant=globex", "query.tenant", "unknown field"],
  ])("%s is a validation_error naming %s", (path, field, reason) => expectQueryRefused(path, field, reason));
});
