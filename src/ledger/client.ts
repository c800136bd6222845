import type { ApprovalRecord } from "../approvals/model";
import { tenantObject } from "../config/placement";
import type { EffectFate } from "../effects/fate";
import type { Env } from "../env";
import type { RunToolSet } from "../machine/grants";
import type { ResultPage } from "../tools/builtins";
import type { Envelope } from "../wire/envelope";
import type { RunStatus } from "../wire/run-status";
import type { RunTrace } from "../wire/run-trace";
import type {
  AddToolsAnswer,
  ApprovalWithCall,
  CallInput,
  DecideInput,
  DecideResult,
  OpenRunAnswer,
  OpenRunInput,
  PendingOpen,
  SessionCallAnswer,
  SessionState,
} from "./ledger-api";

/** The RunLedger's RPC surface as the worker uses it. */
export interface LedgerClient {
  open(input: OpenRunInput): Promise<OpenRunAnswer>;
  /** Creates the run an open stored nothing of, unless it is here; whether the run is here now. */
  openPending(tenant: string, pending: PendingOpen): Promise<boolean>;
  status(tenant: string): Promise<RunStatus | null>;
  end(tenant: string): Promise<RunStatus | null>;
  touchSession(tenant: string, now: number, idleMs: number): Promise<SessionState>;
  /** An MCP session's tool call: its liveness checked and the call admitted in this one request. */
  sessionCall(input: CallInput, idleMs: number): Promise<SessionCallAnswer>;
  readTrace(tenant: string): Promise<Omit<RunTrace, "next_cursor"> | null>;
  readTracePage(tenant: string, cursor: number, limit: number): Promise<RunTrace | null>;
  call(input: CallInput): Promise<Envelope>;
  approval(tenant: string, approvalId: string): Promise<ApprovalRecord | null>;
  /** The approval with its call's key state and stored answer, for a task that waits on it. */
  approvalWithCall(tenant: string, approvalId: string): Promise<ApprovalWithCall | null>;
  decide(input: DecideInput): Promise<DecideResult>;
  /** Expires a pending approval at the agent's request; the approval as it stands after, or null. */
  withdrawApproval(tenant: string, approvalId: string, reason: string | null): Promise<ApprovalRecord | null>;
  resultPage(tenant: string, handle: string, cursor: number): Promise<ResultPage | null>;
  /** What became of a key a tenant shard holds a claim of: its fate, or "deciding" while a call decides it. */
  effectFate(tenant: string, key: string): Promise<EffectFate | "deciding">;
  /** The run's tool set, for its spec export; null when the run is not the tenant's. */
  toolSet(tenant: string): Promise<RunToolSet | null>;
  /** Adds granted tools to the run (`POST /v1/runs/{run_id}/tools`). */
  addTools(tenant: string, tools: string[]): Promise<AddToolsAnswer>;
}

/**
 * The run's ledger. Its id is derived from tenant and run id together, so a run id alone, guessed or
 * leaked, never reaches another tenant's ledger.
 */
export function ledgerFor(env: Env, tenant: string, runId: string): LedgerClient {
  const stub = tenantObject(env, env.RUN_LEDGER, tenant, `${tenant}/${runId}`);
  // Workers RPC types a method returning `unknown` JSON (tool data, trace arguments) as `never`.
  // Every value the ledger returns is plain JSON, which RPC carries unchanged, so the ledger's own
  // method signatures are the true types.
  return stub as unknown as LedgerClient;
}
