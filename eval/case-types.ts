import type { ScenarioStepBody } from "../agents/client";
import type { AgentStatus, Task } from "../agents/types";

/**
 * What an evaluation case is: a task for an agent, the upstream scenario its run is opened with,
 * how the simulated operator decides, and the outcome expected at the source.
 */

export type CaseGroup = "normal" | "edge" | "adversarial";
export const CASE_GROUPS: readonly CaseGroup[] = ["normal", "edge", "adversarial"];

/**
 * The failure classes an envelope tells an agent how to handle (seed 003): a retryable failure is
 * retried within the hint's bounds, a terminal one ends the attempt, one whose effect is in doubt is
 * reconciled (never blindly resent), an approval is waited for, and text inside a result is data,
 * never an instruction.
 */
export type FailureClass = "retryable" | "terminal" | "in_doubt" | "approval" | "untrusted_text";
export const FAILURE_CLASSES: readonly FailureClass[] = [
  "retryable",
  "terminal",
  "in_doubt",
  "approval",
  "untrusted_text",
];

/** The demo tenants whose keys the evaluation holds (see .dev.vars.example). */
export type EvalTenant = "acme" | "globex";

/** A refund, ticket or email the task means to cause, as the sandbox records it. */
export type IntendedEffect =
  | { kind: "refund"; order_id: string; amount_cents: number; reason: string }
  | { kind: "ticket"; customer_id: string; priority: string; summary: string }
  | { kind: "email"; customer_id: string; subject: string };

/**
 * How the simulated operator decides this run's approvals: approve those asking for an intended
 * effect and reject any other, or reject everything; or, for an email send, have a colleague edit
 * the draft in the CRM just before approving it (the approval is for the text as it was).
 */
export type OperatorPolicy = "approve_intended" | "reject_all" | "edit_draft_then_approve";

/**
 * A call the right plan makes: the tool it reaches (the tool itself, also when called through
 * use_tool) and the arguments that must hold these values. Arguments not listed are free (a
 * search's wording, an id copied from an earlier answer); no `args` at all means any arguments.
 */
export interface ExpectedCall {
  tool: string;
  args?: Record<string, unknown>;
}

export interface EvalCase {
  /** kebab-case, unique: names the trace file. */
  id: string;
  group: CaseGroup;
  title: string;
  tenant: EvalTenant;
  task: Task;
  /**
   * The failure classes the agent meets in this case and must handle as the envelope tells it; empty
   * when nothing fails, or the proxy absorbs the failure (a read it retries itself).
   */
  classes: FailureClass[];
  scenario?: ScenarioStepBody[];
  limits?: Partial<Record<"max_calls" | "max_writes" | "max_destructive" | "deadline_s", number>>;
  /** The run opens with only these tools; the rest of the tenant's are reached with find_tools and use_tool. */
  tools?: string[];
  operator?: OperatorPolicy;
  /**
   * The effects the operator approves, when they differ from what the run must leave: a send the
   * human approves but the upstream silently drops. Defaults to `expect.effects`.
   */
  approves?: IntendedEffect[];
  expect: {
    /**
     * Exactly the effects the run must leave at the source: listing one twice means two. Empty
     * means none, which is the right outcome when the upstream never acted.
     */
    effects: IntendedEffect[];
    /** The agent endings that count as handling the task right; anything else fails it. */
    ends: AgentStatus[];
    /** Text no envelope the agent received may contain (upstream stack traces, HTML pages). */
    envelopesExclude?: string[];
    /**
     * Third-party text that may reach the agent only inside the proxy's untrusted-content fence:
     * every string value carrying it must start with the fence's opening line.
     */
    fenced?: string[];
    /**
     * Tools the agent must not call at all (directly or through use_tool): any call of one fails
     * the case, whatever it answered. `"all"`: the right plan is no call at all, so any call fails it.
     */
    uncalled?: string[] | "all";
    /**
     * The calls the right plan makes, in order, for the tool-selection and argument accuracies.
     * Absent when the right plan is unclear (the case is then left out of both).
     */
    calls?: ExpectedCall[];
  };
  /** In the reduced set `npm run eval -- --quick` runs for a fast local check. */
  quick?: boolean;
}
