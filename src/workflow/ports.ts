import type { ApprovalRecord, ApprovalSummary } from "../approvals/model";
import type { ToolSpec } from "../catalog/define-tool";
import type { TenantConfig } from "../config/tenants";
import type { EffectClaim } from "../effects/claim";
import type { TenantCheck } from "../effects/reasons";
import type { Env } from "../env";
import type { PendingOpen } from "../ledger/ledger-api";
import type { AgentCall, CallView } from "../machine/admit";
import type { DecisionView } from "../machine/decide";
import type { InterruptedView } from "../machine/run-events";
import type { CallRecord, RunMeta, StoredRequest } from "../machine/run-state";
import type { Settlement } from "../machine/settle";
import type { Write } from "../machine/writes";
import type { HighRiskFacts } from "../metrics/events";
import type { RunKeeping } from "../upstream/execute";
import type { Envelope, FailureSpec } from "../wire/envelope";

/**
 * What one run's workflow may touch of the object that keeps the run, and nothing more: the run's
 * state as read views, one `commit` of a step's writes, the outbox, the keys in flight and
 * deciding, the alarm, the tenant-wide claim and the clock. The object implements it over its
 * storage; a test implements it over maps. Nothing here decides: every rule is in the machine
 * (`machine/`) or in the workflow that drives it.
 */
export interface RunPorts {
  /** Bindings and configuration, for intake, dispatch and the tenant's settings. */
  readonly env: Env;
  readonly now: () => number;
  readonly reads: RunReads;
  /**
   * Runs one event of the machine and commits its writes in one synchronous transaction; the
   * approvals it changed (and those in `republish`) are in the outbox with it.
   */
  readonly commit: <T extends { writes: Write[] }>(
    event: () => T,
    republish?: readonly string[],
  ) => { result: T; changed: ApprovalSummary[] };
  readonly deferredReads: DeferredReadsPort;
  readonly outbox: OutboxPort;
  readonly inflight: InflightPort;
  /** Keys between their tenant-wide claim and the commit of their admission, in this instance. */
  readonly deciding: { has(key: string): boolean; hold(key: string): void; release(key: string): void };
  readonly alarm: { schedule(): Promise<void> };
  readonly tenantWide: TenantWidePort;
  /** The run's and the tenant's call rates (in memory, leased), and the lease's return at the run's end. */
  readonly rate: { take(): Promise<FailureSpec | null>; released(): Promise<void> };
  /** Calls waiting for an approval's decision (`Prefer: wait`): true once it changed, false when the wait ended. */
  readonly waiters: { wait(approvalId: string, ms: number): Promise<boolean> };
  /** The run's large results and its fault scenario, for a call's execution. */
  readonly keeping: RunKeeping & { results: { forget(): void } };
  readonly metrics: {
    highRisk(origin: { tenant: string; namespace: string }, tool: string, facts: HighRiskFacts): void;
  };
  /** An MCP session's activity: true while it is live (recorded), false once idle past `idleMs`. */
  readonly sessionActive: (run: RunMeta, now: number, idleMs: number) => boolean;
  /** Creates the run a pending open stored nothing of (its first call), and sets its alarm. */
  readonly createPending: (tenant: string, pending: PendingOpen) => Promise<void>;
}

/** The run's state as the workflow reads it; every view is read in the turn that uses it. */
export interface RunReads {
  /** The run loaded here; null before it is opened and after retention deleted it. */
  run(): RunMeta | null;
  /** The key's record; `request` is the request a replay is compared with, when there is one. */
  key(key: string, request: StoredRequest | null): CallRecord | null;
  approval(id: string): ApprovalRecord | null;
  approvalOfKey(key: string): ApprovalRecord | null;
  /** The approval an operator's edit gave a new key, by the key the agent asked for. */
  approvalOfAskedKey(key: string): ApprovalRecord | null;
  pending(): ApprovalRecord[];
  /** How many find_tools and use_tool calls the run made so far. */
  discoveryUsed(): number;
  /** What an agent's call is admitted on; what is in flight and not yet committed is the object's to add. */
  callView(
    call: AgentCall,
    tenant: { maxOpenApprovals: number; approvalSlaMs: number | null },
    tenantWide: { check: TenantCheck; per_run: number | null } | null,
  ): CallView;
  decisionView(
    approvalId: string,
    edit: { key: string; check: TenantCheck | null; per_run: number | null } | null,
  ): DecisionView;
  settlementView(
    key: string | null,
    approval: ApprovalRecord | null,
  ): Pick<Settlement, "run" | "key" | "record" | "approval" | "pending">;
  interruptedView(run: RunMeta): InterruptedView;
}

/** A read's admission, held in memory until it commits with the read's outcome. */
export interface DeferredRead {
  writes: Write[];
  digest: string;
}

export interface DeferredReadsPort {
  /**
   * Spends a read's admission in memory and holds it until its outcome commits; null when its
   * writes may not wait (anything but a trace entry and counters), so the caller commits them now.
   */
  hold(digest: string, writes: Write[]): DeferredRead | null;
  release(read: DeferredRead): void;
}

export interface OutboxPort {
  /** Delivers what the outbox holds; awaited when the answer must wait for the delivery. */
  publish(changed: ApprovalSummary[], awaitDelivery?: boolean): Promise<void>;
  /** The tool and subjects of a call, for the run's directory entry, written with the next commit. */
  learnCall(tool: ToolSpec | null, args: Record<string, unknown> | null): void;
  /** Retries whatever the tenant's directory and shards are still owed, then drops what they acknowledged. */
  deliverOwed(tenant: string): Promise<void>;
  /** Whether the tenant's audit log is still owed a receipt: the run is not deleted while it is. */
  owesAudit(): boolean;
}

/** How the call that sends a key's request answers the identical calls that joined it. */
export interface InflightAnswer {
  resolve: (envelope: Envelope) => void;
  reject: (error: unknown) => void;
}

export interface InflightPort {
  has(key: string | null): boolean;
  mark(key: string | null): InflightAnswer;
  join(key: string): Promise<Envelope>;
  done(key: string | null): void;
}

export interface TenantWidePort {
  /** Takes a new effect's claim at the tenant's effect shards; throws when they cannot be reached. */
  claim(
    tenant: string,
    config: TenantConfig,
    claim: EffectClaim,
    replaces: string | null,
  ): Promise<TenantCheck>;
  /** Asks the claim's shards to reconcile the key with this run now, as their alarm would. */
  reconcile(tenant: string, shards: TenantCheck["shards"], key: string): Promise<void>;
}

/** The run this object serves; every event but `open` and the alarm runs on a loaded one. */
export function loadedRun(reads: RunReads): RunMeta {
  const run = reads.run();
  if (!run) throw new Error("the run ledger has no run loaded");
  return run;
}
