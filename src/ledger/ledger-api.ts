import type { ApprovalRecord } from "../approvals/model";
import type { CallRequest } from "../pipeline/prepare";
import type { FaultPlan } from "../scenarios/modes";
import type { ScenarioStep } from "../scenarios/scenario";
import type { RunLimits } from "../wire/run-status";

/** What the worker hands the RunLedger Durable Object over RPC, and what it gets back. */

export interface OpenRunInput {
  tenant: string;
  run_id: string;
  namespace: string;
  limits: RunLimits;
  repeat_threshold: number;
  /** Upstream faults for this run, already checked; only where fault injection is enabled. */
  scenario?: ScenarioStep[];
}

export interface CallInput {
  call_id: string;
  /** From the verified run token; the ledger refuses a caller of another tenant. */
  tenant: string;
  request: CallRequest;
  /** Orchestrator-supplied intent nonce (a header, never a model argument). */
  intent: string | null;
  /** Orchestrator-supplied X-Sandbox-Fault for this call's first upstream request (sandbox only). */
  fault?: FaultPlan | null;
}

export interface DecideInput {
  tenant: string;
  approval_id: string;
  decision: "approve" | "reject";
  /** Who decided, for the record: an operator id derived from their key, never the key. */
  operator: string;
  /** Their display name as configured with their key, recorded beside the id; null when it has none. */
  operator_name: string | null;
  reason: string | null;
}

export type DecideResult =
  | { ok: true; approval: ApprovalRecord }
  | { ok: false; code: "not_found" | "conflict_error"; message: string; approval: ApprovalRecord | null };
