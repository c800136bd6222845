import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { storeOf } from "../../sandbox/src/env";
import type { RequestLogEntry } from "../../sandbox/src/model";
import { parseKeyList } from "../../src/auth/keys";
import { issueRunToken, type PendingOpenClaims, verifyRunToken } from "../../src/auth/run-token";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { tenantObject } from "../../src/config/placement";
import { parseTenants } from "../../src/config/tenants";
import { deriveIdempotencyKey } from "../../src/core/idempotency-key";
import { KeyStore } from "../../src/ledger/key-store";
import type { RunLedger } from "../../src/ledger/run-ledger";
import { buildRequest } from "../../src/machine/request";
import { catalog } from "../../src/tools";
import { issueUpstreamCredential } from "../../src/upstream/credential";
import { type Envelope, envelopeSchema } from "../../src/wire/envelope";
import { noteRestarted } from "./restarted-objects";
import { configuredSigningKeys } from "./upstream-credentials";

/** Demo keys from .dev.vars.example. */
export const KEYS = {
  acme: "acme-demo-key",
  globex: "globex-demo-key",
  initech: "initech-demo-key",
  hooli: "hooli-demo-key",
  stark: "stark-demo-key",
  umbrella: "umbrella-demo-key",
  wayne: "wayne-demo-key",
} as const;
export const SANDBOX_ADMIN = "sandbox-admin-demo-token";

/** A tenant's namespaces as wrangler.toml configures them, so no test restates the list. */
export function namespacesOf(tenant: string): string[] {
  const config = parseTenants(env.TENANTS)[tenant];
  if (!config) throw new Error(`no tenant ${tenant} in TENANTS`);
  return config.namespaces;
}

/**
 * Secrets no response may ever contain: every tenant, operator and agent key, the run-token keys, the
 * private half (`d`) of every upstream and audit signing key, the sandbox admin token. Run tokens are checked
 * separately: only the run-open answer may carry one.
 */
const SECRETS = [
  "acme-demo-key",
  "acme-next-demo-key",
  "globex-demo-key",
  "initech-demo-key",
  "umbrella-demo-key",
  "hooli-demo-key",
  "stark-demo-key",
  "acme-operator-key",
  "globex-operator-key",
  "initech-operator-key",
  "hooli-operator-key",
  "acme-agent-key",
  "acme-next-agent-key",
  "acme-triage-agent-key",
  "umbrella-agent-key",
  "globex-agent-key",
  ...(JSON.parse(env.RUN_TOKEN_KEYS) as string[]),
  ...(JSON.parse(env.UPSTREAM_SIGNING_KEYS) as Array<{ d: string }>).map((key) => key.d),
  ...(JSON.parse(env.AUDIT_SIGNING_KEYS) as Array<{ d: string }>).map((key) => key.d),
  "sandbox-admin-demo-token",
];
const RUN_TOKEN = /rt1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/;
/** Any JWT, as upstream credentials are: a base64url JSON header (`{"` or `{ `) and payload, then a signature. */
const JWT = /ey[A-Za-z0-9_-]{10,}\.ey[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}/;
/** A JWK that carries private key material: `kty` and a private member (`d`, `p`, `k`, ...) in one object. */
const PRIVATE_JWK =
  /\{[^{}]*"kty"[^{}]*"(?:d|p|q|dp|dq|qi|k)"\s*:[^{}]*\}|\{[^{}]*"(?:d|p|q|dp|dq|qi|k)"\s*:[^{}]*"kty"[^{}]*\}/;

/** Fails the test if a body carries a credential it must not. */
export function assertNoSecrets(text: string, opts: { runTokenAllowed?: boolean } = {}): void {
  for (const secret of SECRETS) {
    if (text.includes(secret)) throw new Error(`a response leaked a secret (${secret.slice(0, 6)}…)`);
  }
  if (JWT.test(text)) throw new Error("a response leaked a JWT (an upstream credential)");
  if (PRIVATE_JWK.test(text)) throw new Error("a response leaked a private JWK");
  if (!opts.runTokenAllowed && RUN_TOKEN.test(text)) throw new Error("a response leaked a run token");
}

/**
 * Every body the proxy returns must be a valid envelope and free of secrets; both are checked on
 * every request a test makes through this helper.
 */
export async function request(
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; body: Envelope }> {
  const response = await exports.default.fetch(new Request(`https://proxy.test${path}`, init));
  const text = await response.text();
  // A new run (201), or a task's run answered again (200): both hand the orchestrator its token.
  const opensRun =
    path === "/v1/runs" &&
    (init.method ?? "GET").toUpperCase() === "POST" &&
    (response.status === 201 || response.status === 200);
  assertNoSecrets(text, { runTokenAllowed: opensRun });
  const parsed = envelopeSchema().safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`not an envelope (${response.status}): ${text.slice(0, 500)}`);
  return { status: response.status, headers: response.headers, body: parsed.data };
}

export interface TestRun {
  id: string;
  token: string;
  tenant: keyof typeof KEYS;
  data: Record<string, unknown>;
}

export async function openRun(
  tenant: keyof typeof KEYS = "acme",
  body: Record<string, unknown> = { namespace: "support" },
): Promise<TestRun> {
  const { status, body: envelope } = await request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${KEYS[tenant]}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(status, JSON.stringify(envelope.error)).toBe(201);
  const data = envelope.data as { run_id: string; run_token: string };
  return { id: data.run_id, token: data.run_token, tenant, data: data as unknown as Record<string, unknown> };
}

export function callTool(run: TestRun, tool: string, args: unknown, headers: Record<string, string> = {}) {
  return request(`/v1/runs/${run.id}/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${run.token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify({ tool, args }),
  });
}

export function postRaw(run: TestRun, body: string) {
  return request(`/v1/runs/${run.id}/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${run.token}`, "content-type": "application/json" },
    body,
  });
}

export async function traceOf(run: TestRun) {
  const { body } = await request(`/v1/runs/${run.id}/trace`, {
    headers: { authorization: `Bearer ${run.token}` },
  });
  return (body.data as { entries: Array<Record<string, unknown>> }).entries;
}

/** The sandbox's own admin API: the source of truth for what really happened upstream. */
export async function sandbox<T = unknown>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await env.ORDERS_API.fetch(
    new Request(`https://sandbox.test${path}`, {
      ...init,
      headers: {
        "x-sandbox-admin": SANDBOX_ADMIN,
        "content-type": "application/json",
        ...(init.headers ?? {}),
      },
    }),
  );
  const text = await response.text();
  if (!response.ok) throw new Error(`sandbox ${path} → ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

export function armFault(runId: string, fault: Record<string, unknown>) {
  return sandbox("/_admin/faults", { method: "POST", body: JSON.stringify({ run_id: runId, ...fault }) });
}

/** An entry of the sandbox's request log, as its admin API returns it. */
export type SandboxRequest = RequestLogEntry;

export async function sandboxRequests(runId: string): Promise<SandboxRequest[]> {
  const body = await sandbox<{ requests: SandboxRequest[] }>(
    `/_admin/requests?run_id=${encodeURIComponent(runId)}`,
  );
  return body.requests;
}

/**
 * Runs out the sandbox's lease on an Idempotency-Key, as its clock passing the lease would: the
 * key of an abandoned request is free again, without waiting IDEMPOTENCY_LEASE_MS. A request that
 * still runs would renew it at its next heartbeat, exactly as it would after a real lapse.
 */
export async function runOutIdempotencyLease(tenant: string, key: string): Promise<void> {
  await storeOf({ STORE: env.SANDBOX_STORE }).renewIdempotency(tenant, key, -1);
}

export async function refundsOf(orderId: string): Promise<Array<Record<string, unknown>>> {
  const body = await sandbox<{ refunds: Array<Record<string, unknown>> }>(
    `/_admin/refunds?order_id=${orderId}`,
  );
  return body.refunds;
}

export const OPERATOR_KEYS = {
  acme: "acme-operator-key",
  globex: "globex-operator-key",
  initech: "initech-operator-key",
  hooli: "hooli-operator-key",
  wayne: "wayne-operator-key",
} as const;

/**
 * acme's other demo operators (.dev.vars.example): Lee Park holds support_lead and finance_lead as
 * Dana Reyes does, Riley Chen only support_lead, and Dana's second key is Dana again.
 */
export const ACME_OPERATORS = {
  dana: "acme-operator-key",
  lee: "acme-operator-key-lee",
  riley: "acme-operator-key-riley",
  dana_second_key: "acme-operator-key-dana-2",
} as const;

/** A request to the operator API with a tenant's operator key. */
export function asOperator(
  path: string,
  init: RequestInit = {},
  tenant: keyof typeof OPERATOR_KEYS = "acme",
) {
  return request(path, {
    ...init,
    headers: {
      authorization: `Bearer ${OPERATOR_KEYS[tenant]}`,
      "content-type": "application/json",
      ...(init.headers ?? {}),
    },
  });
}

/**
 * An operator's query the API refuses: 422 `validation_error` with one problem, at `field`, whose
 * reason contains `reason`.
 */
export async function expectQueryRefused(path: string, field: string, reason: string): Promise<void> {
  const { status, body } = await asOperator(path);
  expect(status).toBe(422);
  expect(body.error?.code).toBe("validation_error");
  expect(body.error?.problems).toEqual([
    expect.objectContaining({ field, reason: expect.stringContaining(reason) }),
  ]);
}

/**
 * An operator's decision. `confirm_duplicate` is the operator saying they saw that another run
 * already acted on the same thing (a test whose file refunds one order in several runs needs it).
 */
export function decide(
  approvalId: string,
  decision: "approve" | "reject",
  reason?: string,
  tenant: keyof typeof OPERATOR_KEYS = "acme",
  options: { confirm_duplicate?: boolean; args?: Record<string, unknown> } = {},
) {
  const body = { ...(reason === undefined ? {} : { reason }), ...options };
  return asOperator(
    `/v1/approvals/${approvalId}/${decision}`,
    { method: "POST", body: JSON.stringify(body) },
    tenant,
  );
}

/** The run's ledger Durable Object, for tests that inspect or disturb its storage directly. */
export function ledgerStubOf(run: TestRun) {
  return tenantObject(
    env,
    env.RUN_LEDGER,
    run.tenant,
    `${run.tenant}/${run.id}`,
  ) as DurableObjectStub<RunLedger>;
}

/**
 * Records the `setAlarm` calls of the run's ledger from now on (until its object is restarted);
 * the function returned reads them back, each as the epoch ms it set.
 */
export async function recordAlarmSets(run: TestRun): Promise<() => Promise<number[]>> {
  type Recording = DurableObjectStorage & { alarmSets?: number[] };
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    const storage = state.storage as Recording;
    const setAlarm = storage.setAlarm.bind(storage);
    storage.alarmSets = [];
    storage.setAlarm = ((at: number | Date, options?: DurableObjectSetAlarmOptions) => {
      storage.alarmSets?.push(Number(at));
      return setAlarm(at, options);
    }) as typeof storage.setAlarm;
  });
  return () =>
    // A copy: the object's own list keeps growing, and a test compares what it read at different times.
    runInDurableObject(ledgerStubOf(run), (_instance, state) => [
      ...((state.storage as Recording).alarmSets ?? []),
    ]);
}

/**
 * An open without a task key stores nothing: the run's ledger is created by the run's first request
 * (`src/runs/pending-open.ts`). A test that looks into the ledger, or moves its stored clock, before
 * any call makes that request here: the run's status.
 */
export async function storeRun(run: TestRun): Promise<void> {
  const { status, body } = await request(`/v1/runs/${run.id}`, {
    headers: { authorization: `Bearer ${run.token}` },
  });
  expect(status, JSON.stringify(body.error)).toBe(200);
}

/**
 * The run as a token would name it whose open (stored nothing, `RunTokenClaims.open`) differs by
 * `change`: signed with the configured run-token key, like the token the open answered with.
 */
export async function withPendingOpen(run: TestRun, change: Partial<PendingOpenClaims>): Promise<TestRun> {
  const keys = parseKeyList("RUN_TOKEN_KEYS", env.RUN_TOKEN_KEYS);
  const opened = await verifyRunToken(run.token, keys);
  if (!opened.ok || opened.payload.open === undefined) throw new Error("the open stored its run");
  const open = { ...opened.payload.open, ...change };
  return { ...run, token: await issueRunToken({ ...opened.payload, open }, keys) };
}

/**
 * The topics in a run's outbox, as stored: what it owes its tenant's shared objects, and what it
 * delivered for a call's answer and deletes with its next commit.
 */
export function outboxTopicsOf(run: TestRun): Promise<string[]> {
  return runInDurableObject(ledgerStubOf(run), (_instance, state) =>
    state.storage.sql
      .exec<{ topic: string }>("SELECT topic FROM outbox ORDER BY topic")
      .toArray()
      .map((row) => row.topic),
  );
}

/**
 * Runs `work` with the timers of the tests' isolate held (the Durable Objects under test share it),
 * so a test decides when a ledger's delayed work runs instead of racing it: a delivered outbox row
 * deleted `ACKNOWLEDGED_DELETE_AFTER_MS` after its delivery stays until `runLedgerTimers` runs that
 * timer, however slow the machine. Dates are not held. Once `work` settles, the real timers come
 * back and what is still held is dropped (a held deletion then rides on the ledger's next commit,
 * as it would anyway; a restarted ledger's goes with its instance).
 */
export async function withHeldTimers<T>(work: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  try {
    return await work();
  } finally {
    vi.useRealTimers();
  }
}

/**
 * Moves the held timers on by `ms` inside the run's ledger, whose timers only work there (its
 * storage belongs to its own request context), and runs those due by then.
 */
export function runLedgerTimers(run: TestRun, ms: number): Promise<void> {
  return runInDurableObject(ledgerStubOf(run), () => {
    vi.advanceTimersByTime(ms);
  });
}

/**
 * A run's entry in the tenant's directory waits in its ledger's outbox for the run's first call; a
 * run whose ledger exists but that is not called has it delivered by its alarm
 * (OPENED_ENTRY_WAIT_MS after the ledger was created). This creates the ledger (`storeRun`) and
 * rings that alarm now.
 */
export async function deliverUncalledRun(run: TestRun): Promise<void> {
  await storeRun(run);
  expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
}

const RESTART_REASON = "test: restart this Durable Object";

/**
 * Restarts one Durable Object the way a deploy or an eviction would: its instance is reset, so the
 * next request builds a fresh one that reloads from storage; other objects are left alone. The
 * workerd the tests run on has no `evictDurableObject`, so the object aborts itself (`ctx.abort()`).
 * Every stub to it is broken afterwards: take a fresh one.
 */
export async function restartDurableObject(stub: DurableObjectStub): Promise<void> {
  noteRestarted(stub);
  const reset = await runInDurableObject(stub, (_instance, state) => state.abort(RESTART_REASON)).then(
    () => new Error("the Durable Object did not reset"),
    (error: unknown) => (error instanceof Error && error.message === RESTART_REASON ? null : error),
  );
  if (reset !== null) throw reset;
}

/** The refunds a run caused, as the sandbox recorded them. */
export async function refundsOfRun(orderId: string, run: TestRun) {
  return (await refundsOf(orderId)).filter((refund) => refund.run_id === run.id);
}

/**
 * The state a crash mid-send leaves: the refund's key recorded as sending in the run's ledger, the
 * request at the upstream, which acted, and no answer ever recorded. Returns the key and the refund
 * the upstream made.
 */
export async function refundSentThenLost(
  run: TestRun,
  args: { order_id: string; amount_cents: number; reason: string },
): Promise<{ key: string; refundId: string }> {
  await storeRun(run);
  const key = await deriveIdempotencyKey({ tenant: run.tenant, runId: run.id, tool: "issue_refund", args });
  const refund = catalog.find("support", "issue_refund") as ToolSpec;
  const stored = buildRequest(refund, args, { key, callId: "call_lost" });
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    new KeyStore(state.storage.sql).send(key, "issue_refund", "destructive", stored, Date.now());
  });
  const credential = await issueUpstreamCredential(
    {
      tenant: run.tenant,
      run: run.id,
      tool: "issue_refund",
      exp: Date.now() + 60_000,
      request: { method: stored.method, target: stored.target, body: stored.body, idempotency_key: key },
    },
    configuredSigningKeys(),
  );
  const lost = await env.PAYMENTS_API.fetch("https://upstream.internal/refunds", {
    method: "POST",
    headers: { ...stored.headers, authorization: `Bearer ${credential}` },
    body: stored.body,
  });
  if (lost.status !== 201) throw new Error(`the upstream refused the lost refund: ${lost.status}`);
  return { key, refundId: ((await lost.json()) as { refund_id: string }).refund_id };
}

/** The tenant's directory of approvals and runs (the operators' lists). */
export function directoryStubOf(tenant: string) {
  return tenantObject(env, env.APPROVAL_DIRECTORY, tenant, tenant);
}

/**
 * The tenant's directory refuses every write of an approval or a run, on its live instance, until
 * it restarts, as one that is down or overloaded would; it still answers lists and lookups, so a
 * test sees what operators see. `restartDurableObject(directoryStubOf(tenant))` brings it back.
 */
export async function failDirectoryWritesOf(tenant: string): Promise<void> {
  await runInDurableObject(directoryStubOf(tenant), (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    sql.exec = ((query: string, ...bindings: SqlStorageValue[]) => {
      if (/^\s*INSERT INTO (approvals|runs)\b/.test(query)) throw new Error("test: the directory is down");
      return exec(query, ...bindings);
    }) as typeof sql.exec;
  });
}

/** One webhook the sandbox's receiver (`/_hooks/approvals`) accepted, verified per Standard Webhooks. */
export interface WebhookDelivery {
  seq: number;
  verified: boolean;
  webhook_id: string | null;
  webhook_timestamp: number | null;
  /** Later deliveries of the same id, acknowledged and not recorded again. */
  redeliveries: number;
  body: {
    type: string;
    timestamp: string;
    tenant: string;
    approval: { id: string; state: string } & Record<string, unknown>;
    escalation_role?: string | null;
  };
}

/** One webhook the sandbox's receiver refused, and why. */
export interface WebhookRejection {
  webhook_id: string | null;
  status: number;
  code: string;
}

/**
 * Makes the sandbox's receiver fail as a receiver that is down: the next `count` verified
 * deliveries of `webhookId` are answered 503 (`receiver_unavailable`) and not recorded.
 */
export async function failWebhookDeliveries(webhookId: string, count: number): Promise<void> {
  await sandbox("/_admin/notifications/failures", {
    method: "POST",
    body: JSON.stringify({ count, webhook_id: webhookId }),
  });
}

/** Every webhook the sandbox's receiver accepted or refused so far. */
export function webhookLog() {
  return sandbox<{ notifications: WebhookDelivery[]; rejections: WebhookRejection[] }>(
    "/_admin/notifications",
  );
}

/** Waits for the delivery of one event: most webhooks leave after the answer, through waitUntil. */
export async function deliveredWebhook(webhookId: string): Promise<WebhookDelivery> {
  for (let wait = 0; wait < 40; wait++) {
    const found = (await webhookLog()).notifications.find((entry) => entry.webhook_id === webhookId);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`webhook ${webhookId} never arrived`);
}

/** A refund's arguments as the tests ask for it: an order, an amount, the customer cancelled. */
export const refund = (order_id: string, amount_cents: number) => ({
  order_id,
  amount_cents,
  reason: "user_cancel",
});

/** An acme run that asks for a refund its operators must approve: the run, and the approval's id. */
export async function askAcmeRefund(order: string, amount: number): Promise<{ run: TestRun; id: string }> {
  const run = await openRun("acme");
  const asked = await callTool(run, "issue_refund", refund(order, amount));
  expect(asked.body.error?.code, JSON.stringify(asked.body.error)).toBe("approval_required");
  return { run, id: asked.body.approval?.id ?? "" };
}
