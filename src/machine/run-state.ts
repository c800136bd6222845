import type { SideEffect } from "../catalog/define-tool";
import { newFenceMarker } from "../core/ids";
import type { TraceParent } from "../core/trace-context";
import type { Envelope, EnvironmentName } from "../wire/envelope";
import type { RunLimits, Taint } from "../wire/run-status";
import type { RunUser } from "../wire/run-user";
import type { AttemptRecord, TraceEntry } from "../wire/trace-entry";
import type { Counters } from "./budget";
import type { ToolPins } from "./tool-pins";

/**
 * The state the run's ledger keeps and the admission machine (`admit.ts`) reasons about: the run,
 * one call record per idempotency key, and the trace. Plain data, so the machine stays pure.
 */

/** Which call first brought third-party text into the run: the wire schema's type. */
export type { Taint } from "../wire/run-status";

export interface RunMeta {
  tenant: string;
  run_id: string;
  namespace: string;
  environment: EnvironmentName;
  catalog_version: string;
  limits: RunLimits;
  repeat_threshold: number;
  state: "open" | "closed";
  created_at: number;
  deadline_at: number;
  ended_at: number | null;
  counters: Counters;
  /** Random per run: untrusted text is fenced with it, so the text cannot forge the fence. */
  fence_marker: string;
  tainted_by: Taint | null;
  /** The tools it was opened with, as `namespace.tool` refs; null for its whole namespace. */
  tools?: string[] | null;
  /** Tools added since by `POST /v1/runs/{run_id}/tools`, as refs. */
  added_tools?: string[];
  /** The namespaces its tools may come from: the tenant's, or the agent profile's one. */
  reach?: string[];
  /** Whom the run acts for (a verified assertion of the tenant's identity provider); null: no one named. */
  user?: RunUser | null;
  /** The agent profile it was opened with (an agent key or an OAuth grant); null for a tenant key's. */
  profile?: string | null;
  /** Each tool's version as the run was shown it or first called it (`tool-pins.ts`); none before pins were kept. */
  tool_versions?: ToolPins;
}

/**
 * The exact upstream request of a key, fixed when the key is first recorded: every attempt under the
 * key (the agent's call, its resend, an operator's approval) sends these bytes. The credential is
 * not part of it: it is signed per dispatch and dies with it.
 */
export interface StoredRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path and query, such as `/orders/A1001?expand=refunds`. */
  target: string;
  headers: Record<string, string>;
  body: string | null;
}

/**
 * held: waiting for a human, nothing sent, no effect budget spent;
 * sending: the request may be on its way (a ledger restart leaves it here, and it counts as in doubt);
 * in_doubt: sent, fate unknown; the next identical call resends the stored bytes;
 * completed: the outcome is known and stored; identical calls replay it.
 */
export type KeyState = "held" | "sending" | "in_doubt" | "completed";

export interface CallRecord {
  key: string;
  tool: string;
  side_effect: SideEffect;
  state: KeyState;
  request: StoredRequest;
  envelope: Envelope | null;
  sends: number;
  /** When the key was first recorded (held or sent): no effect of this call is older. */
  recorded_at?: number;
}

export interface NewTraceEntry {
  call_id: string;
  /** "agent", or "operator:<id>" for a call an operator's approval executed. */
  actor: string;
  /** The operator's display name when an operator's approval executed the call; absent for the agent. */
  actor_name?: string | null;
  started_at: number;
  tool: string | null;
  side_effect: string | null;
  args: unknown;
  call_digest: string;
  idempotency_key: string | null;
  catalog_version: string;
  /** How long the call's tenant-wide step took, when it made one. */
  claim_ms?: number | null;
  /** "use_tool" when the call came through it: `tool` names the real tool. */
  via?: string | null;
  /** How an operator changed the arguments before approving the call (`args` are the executed ones). */
  edit?: TraceEntry["edit"];
  /** The agent asked again about an approval still pending: answered, and charged nothing unless `poll_charged`. */
  poll?: boolean;
  /** The poll came sooner than the wait's retry hint, or past the free polls: charged as a call. */
  poll_charged?: boolean;
  /** The caller's W3C trace context, when it sent a valid one: the parent of the call's span. */
  traceparent?: TraceParent | null;
}

export interface TraceCompletion {
  ended_at: number;
  /** What the model was given (masked, fenced, or the summary of a paged result), if small enough to keep. */
  result?: unknown;
  outcome: string;
  error_code: string | null;
  upstream_status: number | null;
  replayed: boolean;
  attempts: readonly AttemptRecord[];
  /**
   * What a read after the call concluded, for the audit log: the postcondition's verdict on a
   * claimed success, or the settling read's on a write in doubt. The trace shows the read's
   * attempts (purpose "check") and does not store this.
   */
  read_back?: ReadBack | null;
}

/** A read's verdict on a write's effect: see `TraceCompletion.read_back`. */
export interface ReadBack {
  kind: "postcondition" | "settle";
  /** held, silent_failure or partial_success; found, absent, unclear, or unread when the read failed. */
  verdict: string;
}

/** A new run as `POST /v1/runs` opens it: nothing spent, its deadline counted from now. */
export function newRun(
  input: {
    tenant: string;
    run_id: string;
    namespace: string;
    limits: RunLimits;
    repeat_threshold: number;
    tools?: string[] | null | undefined;
    reach?: string[] | undefined;
    user?: RunUser | null | undefined;
    profile?: string | null | undefined;
  },
  environment: EnvironmentName,
  shown: { catalog_version: string; tool_versions: ToolPins },
  now: number,
): RunMeta {
  return {
    tenant: input.tenant,
    run_id: input.run_id,
    namespace: input.namespace,
    environment,
    catalog_version: shown.catalog_version,
    limits: input.limits,
    repeat_threshold: input.repeat_threshold,
    state: "open",
    created_at: now,
    deadline_at: now + input.limits.deadline_s * 1000,
    ended_at: null,
    counters: { calls_used: 0, writes_used: 0, destructive_used: 0 },
    fence_marker: newFenceMarker(),
    tainted_by: null,
    tools: input.tools ?? null,
    added_tools: [],
    reach: input.reach ?? [input.namespace],
    user: input.user ?? null,
    profile: input.profile ?? null,
    tool_versions: shown.tool_versions,
  };
}
