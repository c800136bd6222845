import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
} from "@modelcontextprotocol/server";
import * as z from "zod";
import { executionOf } from "../approvals/execution";
import { APPROVAL_POLL_MS, type ApprovalRecord, WITHDRAWN_PREFIX } from "../approvals/model";
import { signToken, verifyToken } from "../auth/signed-token";
import { loadConfig } from "../config/load";
import { callAgainOf } from "../door/call-again";
import type { Env } from "../env";
import { requestContext } from "../http/respond";
import { ledgerFor } from "../ledger/client";
import type { ApprovalWithCall } from "../ledger/ledger-api";
import { APPROVAL_END_NEXT, expiredSpec, expiryOf, rejectedSpec } from "../machine/answers";
import { RETENTION_MS } from "../machine/run-events";
import { type Envelope, failure } from "../wire/envelope";
import { grantedText, toCallToolResult } from "./call-result";

/**
 * A call that waits for a human, as a task of the `io.modelcontextprotocol/tasks` extension
 * (2026-07-28). The task holds no state of its own: its id is a signed token naming the tenant, run
 * and approval and the principal it was handed to, and the approval in the run's ledger (the run's
 * single writer) is its state, so any isolate answers `tasks/get` and nothing is kept twice. The
 * SDK has no tasks runtime: the three methods are registered by hand with explicit schemas.
 */

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

const PREFIX = "tk1";

/** Who may poll or cancel a task: the run token's run, or the agent profile that called. */
export type TaskOwner = { tenant: string; principal: string };

const TaskClaimsSchema = z.strictObject({
  tenant: z.string(),
  run: z.string(),
  approval: z.string(),
  principal: z.string(),
  exp: z.number(),
});
type TaskClaims = z.infer<typeof TaskClaimsSchema>;

type TaskStatus = "working" | "completed" | "cancelled";

/** A task as `tools/call` and `tasks/get` describe it. */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  /** Once completed: the call's result, or an error result saying nothing was executed. */
  result?: CallToolResult;
}

/** Whether the request a handler serves declares the tasks extension in its client capabilities. */
export function declaresTasks(handlerContext: unknown): boolean {
  const envelope = (handlerContext as { mcpReq?: { envelope?: Record<string, unknown> } }).mcpReq?.envelope;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  if (typeof capabilities !== "object" || capabilities === null) return false;
  const extensions = (capabilities as { extensions?: unknown }).extensions;
  return typeof extensions === "object" && extensions !== null && TASKS_EXTENSION in extensions;
}

/**
 * When a task's id stops being answered: its approval's expiry plus the run's retention, so a task
 * that ran (or ended) is read after its approval window closes, for as long as the run's data is
 * kept. The run's data may go sooner (its retention counts from the run's end): then the ledger no
 * longer holds the approval, and the task's records are gone all the same.
 */
function taskExpiry(approval: { expires_at: string }): number {
  return Date.parse(approval.expires_at) + RETENTION_MS;
}

/**
 * The task for a call answered `approval_required`, or null for any other answer. It is the task
 * `tasks/get` reads, from the approval where it is kept (so that read resolves before the id is
 * handed out; an approval not found there makes no task); its id lives past the approval's window
 * (`taskExpiry`), and its poll interval is the envelope's own retry hint.
 */
export async function taskForWait(
  env: Env,
  owner: TaskOwner,
  run: string,
  envelope: Envelope,
): Promise<(TaskView & { resultType: "task" }) | null> {
  const approval = envelope.approval;
  if (envelope.error?.code !== "approval_required" || !approval) return null;
  const claims: TaskClaims = {
    tenant: owner.tenant,
    run,
    approval: approval.id,
    principal: owner.principal,
    exp: taskExpiry(approval),
  };
  const [taskId, read] = await Promise.all([
    signToken(PREFIX, claims, loadConfig(env).runTokenKeys),
    ledgerFor(env, owner.tenant, run).approvalWithCall(owner.tenant, approval.id),
  ]);
  if (!read) return null;
  return {
    resultType: "task",
    ...taskOf(env, taskId, read.approval, read.call),
    pollIntervalMs: envelope.error.retry_after_ms ?? APPROVAL_POLL_MS,
  };
}

/** What a pending approval waits for: who must decide (their roles, how many people), until when, and whether it is overdue. */
function waitingMessage(approval: ApprovalRecord): string {
  const { tenant, id } = approval;
  const roles = approval.approver_roles.length > 0 ? ` holding ${approval.approver_roles.join(" or ")}` : "";
  const who =
    approval.approvals_required > 1
      ? `${approval.approvals_required} different operators of ${tenant}${roles} (${approval.approvers.length} of ${approval.approvals_required} so far)`
      : `an operator of ${tenant}${roles}`;
  const overdue = approval.overdue
    ? ` It is overdue: its decision was due at ${approval.sla_due_at}${approval.escalated_at ? ", and the escalation role was told" : ""}.`
    : "";
  return `Waiting for approval ${id}: ${who} must approve or reject it (console, or POST /v1/approvals/${id}/approve) before ${approval.expires_at}, when it expires unexecuted.${overdue}`;
}

const TaskParamsSchema = z.looseObject({ taskId: z.string() });
const CancelParamsSchema = z.looseObject({ taskId: z.string(), reason: z.string().max(500).optional() });
const UpdateParamsSchema = z.looseObject({
  taskId: z.string(),
  inputResponses: z.record(z.string(), z.unknown()).optional(),
});

/**
 * `tasks/get` (free: it reads the approval and spends no budget), `tasks/cancel` (withdraws a
 * pending approval request, so no later decision can execute it) and `tasks/update` (nothing to
 * update: our tasks never ask for input); the last two answer with the empty acknowledgement the
 * extension asks for, whatever the approval's state. Only a client that declared the
 * extension may use them; a task id that is forged, another principal's or another tenant's is
 * answered alike, one whose records are gone says so, and nothing changes.
 */
export function registerTaskHandlers(server: Server, env: Env, owner: TaskOwner): void {
  server.setRequestHandler("tasks/get", { params: TaskParamsSchema }, async (params, ctx) => {
    const claims = await ownTask(env, owner, params.taskId, ctx);
    const read = await ledgerFor(env, claims.tenant, claims.run).approvalWithCall(
      claims.tenant,
      claims.approval,
    );
    if (!read) throw recordsGone();
    return { ...taskOf(env, params.taskId, read.approval, read.call) };
  });
  server.setRequestHandler("tasks/cancel", { params: CancelParamsSchema }, async (params, ctx) => {
    const claims = await ownTask(env, owner, params.taskId, ctx);
    const ledger = ledgerFor(env, claims.tenant, claims.run);
    // A pending approval is withdrawn; one already decided stands, and tasks/get says how it ended.
    const approval = await ledger.withdrawApproval(claims.tenant, claims.approval, params.reason ?? null);
    if (!approval) throw recordsGone();
    return {};
  });
  server.setRequestHandler("tasks/update", { params: UpdateParamsSchema }, async (params, ctx) => {
    const claims = await ownTask(env, owner, params.taskId, ctx);
    const approval = await ledgerFor(env, claims.tenant, claims.run).approval(claims.tenant, claims.approval);
    if (!approval) throw recordsGone();
    // A wait for a human never asks the client for input: no key is outstanding, so every response
    // is ignored, as the extension says a server should for keys it is not waiting on.
    return {};
  });
}

async function ownTask(
  env: Env,
  owner: TaskOwner,
  taskId: string,
  handlerContext: unknown,
): Promise<TaskClaims> {
  if (!declaresTasks(handlerContext)) {
    throw new MissingRequiredClientCapabilityError(
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      `tasks/* needs the ${TASKS_EXTENSION} extension declared in the request's client capabilities.`,
    );
  }
  // Expiry is checked below, once the id is known to be this caller's: another's is unknown, expired or not.
  const verified = await verifyToken(
    PREFIX,
    taskId,
    loadConfig(env).runTokenKeys,
    (value) => {
      const parsed = TaskClaimsSchema.safeParse(value);
      return parsed.success ? parsed.data : null;
    },
    Number.NEGATIVE_INFINITY,
  );
  if (!verified.ok) throw unknownTask();
  const claims = verified.payload;
  if (claims.tenant !== owner.tenant || claims.principal !== owner.principal) throw unknownTask();
  if (claims.exp <= Date.now()) throw recordsGone();
  return claims;
}

/**
 * A task this caller was handed whose records are no longer kept: its id has expired, or the run's
 * data was deleted. What the call did is not said here, whatever it was.
 */
function recordsGone(): ProtocolError {
  const hours = RETENTION_MS / 3_600_000;
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `This task's records are gone: a task is kept for ${hours} h after its approval's expiry or its run's end, whichever comes first, and then deleted with the run's data. Nothing of it can be read or changed any more.`,
  );
}

function unknownTask(): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    "Unknown task: no task with this id was handed to this caller. Use the taskId your tools/call returned, unchanged.",
  );
}

/**
 * A task from its approval's state and its call's key: waiting, completed with the call's result,
 * or cancelled. An approved call whose send ended without executing it (in doubt: the key is no
 * longer sending) is completed too, with that send's answer and the way on: the agent's identical
 * call resends it under the same key. Reading a task never sends anything.
 */

function taskOf(
  env: Env,
  taskId: string,
  approval: ApprovalRecord,
  call: ApprovalWithCall["call"],
): TaskView {
  // The task is created with its approval, and ttlMs counts from then: the same on every read.
  const base = {
    taskId,
    createdAt: approval.created_at,
    lastUpdatedAt: approval.decided_at ?? approval.created_at,
    ttlMs: taskExpiry(approval) - Date.parse(approval.created_at),
    pollIntervalMs: APPROVAL_POLL_MS,
  };
  switch (approval.state) {
    case "pending":
      return {
        ...base,
        status: "working",
        statusMessage: waitingMessage(approval),
      };
    case "approved": {
      const settled = call && call.state !== "sending" ? call.envelope : null;
      if (!settled)
        return {
          ...base,
          status: "working",
          statusMessage: `Approval ${approval.id} was granted; the call is executing.`,
        };
      const text = `Approval ${approval.id} was granted, but the ${approval.tool} call it executed did not finish: whether it took effect is unknown, and nothing sends it again by itself. ${callAgainOf(approval.tool)}`;
      const result = toCallToolResult(settled);
      return {
        ...base,
        status: "completed",
        statusMessage: text,
        result: { ...result, content: [{ type: "text", text }, ...result.content] },
      };
    }
    case "executed": {
      const result = approval.result;
      if (!result)
        return {
          ...base,
          status: "working",
          statusMessage: `Approval ${approval.id} was granted; the call is executing.`,
        };
      return {
        ...base,
        status: "completed",
        statusMessage: grantedText(approval.id, approval.execution ?? executionOf(result)),
        result: toCallToolResult(result),
      };
    }
    case "rejected":
    case "expired": {
      const withdrawn =
        approval.state === "expired" && (approval.decision_reason ?? "").startsWith(WITHDRAWN_PREFIX);
      const ended = approval.state === "rejected" ? "rejected" : expiryOf(approval);
      const why =
        approval.state === "rejected"
          ? `an operator rejected it${approval.decision_reason ? ` (operator's reason: ${JSON.stringify(approval.decision_reason)})` : ""}`
          : `the approval ${ended === "expired_undecided" ? "expired undecided" : "expired"} (${approval.decision_reason ?? "nobody decided in time"})`;
      const text = `Nothing was executed: ${why}. The ${approval.tool} call with these arguments did not run and will not run. ${APPROVAL_END_NEXT[ended]}`;
      const spec = approval.state === "rejected" ? rejectedSpec(approval) : expiredSpec(approval);
      const envelope = failure(
        {
          ...requestContext(env),
          tool: approval.tool,
          approval: { id: approval.id, state: approval.state, expires_at: approval.expires_at },
        },
        spec,
      );
      return {
        ...base,
        status: withdrawn ? "cancelled" : "completed",
        statusMessage: text,
        result: {
          content: [{ type: "text", text }],
          structuredContent: envelope as unknown as Record<string, unknown>,
          isError: true,
        },
      };
    }
  }
}
