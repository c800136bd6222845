import { env, exports } from "cloudflare:workers";
import type { PresentedCredential } from "../../../sandbox/src/model";
import { parseTenants } from "../../../src/config/tenants";
import { type Envelope, envelopeSchema } from "../../../src/wire/envelope";
import { runStatusSchema } from "../../../src/wire/run-status";
import {
  asOperator,
  assertNoSecrets,
  KEYS,
  request,
  restartDurableObject,
  type SandboxRequest,
  sandbox,
  sandboxRequests,
  type TestRun,
} from "../helpers";
import {
  type AgentCall,
  argsSigOf,
  type Counters,
  type HeaderFault,
  type Limits,
  type TenantName,
  type ToolName,
} from "./reference";

/**
 * The system under test as the model-based test drives it: the real worker (REST and MCP doors,
 * operator API) and the sandbox's own records. Every proxy answer is schema-checked as an envelope
 * and scanned for secrets, here or in test/workerd/helpers.ts.
 */

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Long runs: the model moves the deadline itself, so the real clock must never get there first. */
const DEADLINE_S = 900;

/**
 * The proxy's own rate limits (per run, per tenant, runs opened) are not what this test is about,
 * and a soak of hundreds of sequences trips them. A refused request is not a dispatch (nothing is
 * charged or sent), so waiting and sending it again is the same call made later.
 */
async function pastRateLimits(send: () => Promise<Envelope>): Promise<Envelope> {
  for (let attempt = 0; ; attempt++) {
    const answer = await send();
    const scope = answer.error?.code === "rate_limited" ? answer.error.details?.scope : undefined;
    if (typeof scope !== "string" || attempt >= 60) return answer;
    // In steps under a second: the limiter answers again with what is left of its wait.
    await sleep(Math.min(Math.max(answer.error?.retry_after_ms ?? 900, 100), 900));
  }
}

export async function openModelRun(tenant: TenantName, limits: Limits): Promise<TestRun> {
  const answer = await pastRateLimits(
    async () =>
      (
        await request("/v1/runs", {
          method: "POST",
          headers: { authorization: `Bearer ${KEYS[tenant]}`, "content-type": "application/json" },
          body: JSON.stringify({ namespace: "support", limits: { ...limits, deadline_s: DEADLINE_S } }),
        })
      ).body,
  );
  if (answer.outcome !== "success")
    throw new Error(`could not open a ${tenant} run: ${JSON.stringify(answer)}`);
  const data = answer.data as { run_id: string; run_token: string };
  return { id: data.run_id, token: data.run_token, tenant, data: data as unknown as Record<string, unknown> };
}

function faultHeaders(fault: HeaderFault | null): Record<string, string> {
  if (!fault) return {};
  const headers: Record<string, string> = { "x-sandbox-fault": fault.mode };
  if ("hang_ms" in fault) headers["x-sandbox-fault-hang-ms"] = String(fault.hang_ms);
  if ("retry_after_s" in fault) headers["x-sandbox-fault-retry-after"] = String(fault.retry_after_s);
  return headers;
}

function callHeaders(run: TestRun, call: AgentCall): Record<string, string> {
  return {
    authorization: `Bearer ${run.token}`,
    "content-type": "application/json",
    ...(call.intent === null ? {} : { "x-call-intent": call.intent }),
    ...faultHeaders(call.fault),
  };
}

async function callOverRest(run: TestRun, call: AgentCall): Promise<Envelope> {
  const { body } = await request(`/v1/runs/${run.id}/calls`, {
    method: "POST",
    headers: callHeaders(run, call),
    body: JSON.stringify({ tool: call.tool, args: call.args }),
  });
  return body;
}

/** A raw JSON-RPC `tools/call`, the way any MCP host sends it to the stateless endpoint. */
async function callOverMcp(run: TestRun, call: AgentCall): Promise<Envelope> {
  const response = await exports.default.fetch(
    new Request("https://proxy.test/mcp", {
      method: "POST",
      headers: { ...callHeaders(run, call), accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: call.tool, arguments: call.args },
      }),
    }),
  );
  const text = await response.text();
  assertNoSecrets(text);
  const message = JSON.parse(text) as { result?: { structuredContent?: unknown } };
  if (!message.result)
    throw new Error(`MCP tools/call got no result (${response.status}): ${text.slice(0, 400)}`);
  const parsed = envelopeSchema().safeParse(message.result.structuredContent);
  if (!parsed.success) throw new Error(`MCP structuredContent is not an envelope: ${text.slice(0, 400)}`);
  return parsed.data;
}

export function sendCall(run: TestRun, call: AgentCall): Promise<Envelope> {
  return pastRateLimits(() => (call.door === "rest" ? callOverRest(run, call) : callOverMcp(run, call)));
}

/** A call whose raw body carries a key JavaScript treats specially; JSON.stringify would drop it. */
export async function sendRawCall(run: TestRun, rawBody: string): Promise<Envelope> {
  return pastRateLimits(
    async () =>
      (
        await request(`/v1/runs/${run.id}/calls`, {
          method: "POST",
          headers: { authorization: `Bearer ${run.token}`, "content-type": "application/json" },
          body: rawBody,
        })
      ).body,
  );
}

export async function endRun(run: TestRun): Promise<Envelope> {
  const { body } = await request(`/v1/runs/${run.id}/end`, {
    method: "POST",
    headers: { authorization: `Bearer ${run.token}` },
  });
  return body;
}

export interface RunStatusView {
  state: string;
  counters: Counters;
}

/** `GET /v1/runs/{id}`: the run's state and what it has spent (`used`). */
export async function runStatusOf(run: TestRun): Promise<RunStatusView> {
  const { body } = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
  if (body.outcome !== "success") throw new Error(`run status failed: ${JSON.stringify(body.error)}`);
  const data = runStatusSchema().parse(body.data);
  return { state: data.state, counters: data.used };
}

export interface Decision {
  status: number;
  envelope: Envelope;
}

/**
 * An operator's decision over the API. Earlier sequences leave runs of the same tenant with the same
 * refunds pending, so an approval may have duplicates in other runs: `confirmDuplicate` says whether
 * this operator checked them and approves anyway.
 */
export async function decideAs(
  tenant: TenantName,
  approvalId: string,
  decision: "approve" | "reject",
  confirmDuplicate: boolean,
  /** The operator key deciding; the tenant's first operator's when absent. */
  key?: string,
  /** Approve these arguments instead of the asked ones (approve with edit). */
  args?: Record<string, unknown>,
): Promise<Decision> {
  const body =
    decision === "reject"
      ? { reason: "Not this one: the model-based test says no." }
      : { confirm_duplicate: confirmDuplicate, ...(args === undefined ? {} : { args }) };
  const answer = await asOperator(
    `/v1/approvals/${approvalId}/${decision}`,
    {
      method: "POST",
      body: JSON.stringify(body),
      ...(key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } }),
    },
    tenant,
  );
  return { status: answer.status, envelope: answer.body };
}

export interface ApprovalView {
  state: string;
  decision_reason: string | null;
  /** How many distinct operators must approve it (2 under the two-person rule); the API says, a ledger read does not. */
  approvals_required?: number;
}

export async function approvalOf(tenant: TenantName, approvalId: string): Promise<ApprovalView> {
  const { body } = await asOperator(`/v1/approvals/${approvalId}`, {}, tenant);
  if (body.outcome !== "success") throw new Error(`approval ${approvalId}: ${JSON.stringify(body.error)}`);
  return (body.data as { approval: ApprovalView }).approval;
}

export async function pendingApprovalIds(tenant: TenantName): Promise<Set<string>> {
  const { body } = await asOperator("/v1/approvals?state=pending", {}, tenant);
  const approvals = (body.data as { approvals: Array<{ id: string }> }).approvals;
  return new Set(approvals.map((approval) => approval.id));
}

/** One effect the sandbox holds, named by the call that would have caused it. */
export interface Effect {
  tool: ToolName;
  argsSig: string;
  id: string;
}

/** A refund as the sandbox's `/_admin/refunds` lists it. */
export interface RefundRow {
  refund_id: string;
  order_id: string;
  amount_cents: number;
  reason: string;
  run_id: string | null;
  created_at: string;
}

interface TicketRow {
  ticket_id: string;
  customer_id: string;
  priority: string;
  summary: string;
  run_id: string | null;
}

/**
 * The error code the upstream stored under a key, read whole from its records: what an answer
 * whose delivery was cut off said. Null when nothing is stored (a request refused before it ran,
 * such as a key reused for another request, stores no answer) or the answer was no error.
 */
export async function storedErrorCode(tenant: TenantName, key: string): Promise<string | null> {
  const stored = await sandbox<{ state: string; body?: { error?: { code?: unknown } } }>(
    `/_admin/idempotency-keys/${encodeURIComponent(key)}?tenant=${tenant}`,
  );
  const code = stored.body?.error?.code;
  return stored.state === "answered" && typeof code === "string" ? code : null;
}

/** The refunds and tickets that exist upstream for this run: the truth every answer is held to. */
export async function effectsOf(run: TestRun): Promise<Effect[]> {
  const [{ refunds }, { tickets }] = await Promise.all([
    sandbox<{ refunds: RefundRow[] }>(`/_admin/refunds?tenant=${run.tenant}`),
    sandbox<{ tickets: TicketRow[] }>(`/_admin/tickets?tenant=${run.tenant}`),
  ]);
  return [
    ...refunds
      .filter((row) => row.run_id === run.id)
      .map(({ refund_id, order_id, amount_cents, reason }) => ({
        tool: "issue_refund" as const,
        argsSig: argsSigOf("issue_refund", { order_id, amount_cents, reason }),
        id: refund_id,
      })),
    ...tickets
      .filter((row) => row.run_id === run.id)
      .map(({ ticket_id, customer_id, priority, summary }) => ({
        tool: "create_internal_ticket" as const,
        argsSig: argsSigOf("create_internal_ticket", { customer_id, priority, summary }),
        id: ticket_id,
      })),
  ];
}

export function upstreamRequestsOf(run: TestRun): Promise<SandboxRequest[]> {
  return sandboxRequests(run.id);
}

/** The last credential the sandbox was presented per tool of this run, as a leaky upstream keeps it. */
export async function presentedCredentialsOf(run: TestRun): Promise<PresentedCredential[]> {
  const { credentials } = await sandbox<{ credentials: PresentedCredential[] }>(
    `/_admin/credentials?run_id=${encodeURIComponent(run.id)}`,
  );
  return credentials;
}

/** A credential is a JWT: `sub` the tenant, `aud` the tool, `run` the run, `exp` read as milliseconds. */
export { credentialClaims } from "../upstream-credentials";

/** Restarts every effect shard of the tenant, the way a deploy would: each reloads what it stored. */
export async function restartEffectShards(tenant: TenantName): Promise<void> {
  const shards = parseTenants(env.TENANTS)[tenant]?.effect_shards ?? 0;
  for (let shard = 0; shard < shards; shard++) {
    await restartDurableObject(env.EFFECT_SHARD.get(env.EFFECT_SHARD.idFromName(`${tenant}/${shard}`)));
  }
}
