import type { ApprovalRecord } from "../approvals/model";
import type { RunToolSet } from "../machine/grants";
import type { KeyState } from "../machine/run-state";
import type { ScenarioStep } from "../scenarios/scenario";
import type { Envelope, FailureSpec, Problem } from "../wire/envelope";
import type { RunLimits, RunStatus } from "../wire/run-status";
import type { RunUser } from "../wire/run-user";
import type { AgentCallInput } from "../workflow/intake-call";

/** What the worker hands the RunLedger Durable Object over RPC, and what it gets back. */

export interface OpenRunInput {
  tenant: string;
  run_id: string;
  namespace: string;
  limits: RunLimits;
  repeat_threshold: number;
  /** The tools it opens with, as `namespace.tool` refs; null: its whole namespace. */
  tools?: string[] | null;
  /** The namespaces its tools may come from. */
  reach?: string[];
  /** The agent profile that opens it; null or absent for a tenant key. */
  profile?: string | null;
  /** Upstream faults for this run, already checked; only where fault injection is enabled. */
  scenario?: ScenarioStep[];
  /** The orchestrator's task this run is for, and the open request as it came (its fields by name). */
  task?: { key: string; request: Record<string, unknown> };
  /**
   * Opened under the run id an MCP session reserved at its start (and signed into its session id):
   * an open of that id that finds the run (a concurrent first call of the same session) gets it back.
   */
  reserved?: true;
  /** Whom the run acts for: the user its opener's verified assertion named. */
  user?: RunUser | null;
}

/**
 * What opening answers: a new run; the run already opened for the same task and the same request;
 * or, for the same task with another request, the fields that differ (nothing is opened).
 */
export type OpenRunAnswer =
  | { kind: "opened"; status: RunStatus }
  | { kind: "reused"; status: RunStatus }
  | { kind: "conflict"; fields: string[] }
  /** The run's id was taken by a run retention deleted (ledger/retired-run.ts): nothing is opened. */
  | { kind: "retired"; run_id: string; deleted_at: number };

/** What an MCP session's request finds of its run: live, ended, or none (not opened, or gone). */
export type SessionState = "live" | "ended" | "none";

/** What an MCP session's tool call answers: the call's envelope when the session is live, else its state. */
export type SessionCallAnswer =
  | { session: "live"; envelope: Envelope }
  | { session: Exclude<SessionState, "live"> };

export interface CallInput extends AgentCallInput {
  /** From the verified run token; the ledger refuses a caller of another tenant. */
  tenant: string;
  /** The open its run token carries when that open stored nothing: the run is created from it. */
  open?: PendingOpen | undefined;
}

/**
 * An open that stored nothing (`RunTokenClaims.open`): the run its first request creates, as the
 * open would have created it then.
 */
export interface PendingOpen {
  run_id: string;
  namespace: string;
  limits: RunLimits;
  repeat_threshold: number;
  tools: string[] | null;
  reach: string[];
  /** When it was opened (epoch ms): the run's clock starts here. */
  opened_at: number;
  /** The catalog version the open's tool list was built from. */
  catalog_version: string;
  /** Whom the run acts for, as verified when it was opened. */
  user?: RunUser | null;
  /** The agent profile that opened it; null for a tenant key. */
  profile?: string | null;
  /** What the open's tool list showed of each tool (`shownTools`); absent from older tokens. */
  tools_seen?: string | undefined;
}

export interface DecideInput {
  tenant: string;
  approval_id: string;
  decision: "approve" | "reject";
  /** Who decided, for the record: an operator id derived from their key, never the key. */
  operator: string;
  /** Their display name as configured with their key, recorded beside the id; null when it has none. */
  operator_name: string | null;
  /** The roles their key holds: only an operator holding one of the approval's roles decides it. */
  operator_roles: readonly string[];
  reason: string | null;
  /** Approve these arguments instead of the ones asked for (approve with edit); absent: as asked. */
  args?: Record<string, unknown> | null;
  /** For an edit: the operator saw the earlier effects of other runs the edited call repeats. */
  confirm_duplicate?: boolean;
  /** The SHA-256 of the decision context the operator saw, recorded on the audit receipt. */
  context_digest?: string | null;
}

export type DecideResult =
  | {
      ok: true;
      approval: ApprovalRecord;
      /** The answer of the call this decision sent, once settled; absent when it sent none. */
      call?: Envelope;
    }
  /** The edited arguments failed the tool's schema or policy: `refusal` says which field and why. */
  | {
      ok: false;
      code: "edit_refused";
      message: string;
      refusal: FailureSpec;
      approval: ApprovalRecord | null;
    }
  | {
      ok: false;
      code: "not_found" | "conflict_error";
      message: string;
      approval: ApprovalRecord | null;
      /** Why an edit was refused while the approval still waits (see `Refusal` in machine/decide.ts). */
      reason?: "duplicate_unconfirmed" | "edit_over_cap";
    }
  | {
      ok: false;
      code: "permission_error";
      message: string;
      roles: string[];
      approval: ApprovalRecord | null;
    };

/**
 * An approval and how far its call got: its key's state and the answer stored for it (null when
 * the key has no record). An approved call whose send ended in doubt stays `approved`, and only its
 * key tells that the send is over.
 */
export interface ApprovalWithCall {
  approval: ApprovalRecord;
  call: { state: KeyState; envelope: Envelope | null } | null;
}

/** What adding tools to a run answers: its tool set now, or why nothing was added. */
export type AddToolsAnswer =
  | { kind: "added"; tool_set: RunToolSet }
  | { kind: "refused"; problems: Problem[] }
  | { kind: "not_found" }
  | { kind: "closed" };
