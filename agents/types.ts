import type { RunClient } from "./client";

/**
 * The agent-loop interface the evaluation drives. A task carries both a prompt (for a model-backed
 * agent) and a scripted plan (for the scripted agents): the same job, said two ways.
 */

/** One tool call of a plan. */
export interface PlannedCall {
  tool: string;
  args: Record<string, unknown>;
  /**
   * An orchestrator's X-Call-Intent nonce: two identical writes the task really wants twice (two
   * tickets for two complaints that read the same). Never something the model chooses.
   */
  intent?: string;
  /** Send this many identical calls at once, as a model emitting parallel tool calls does. */
  parallel?: number;
  /**
   * Arguments copied from the data of the plan's previous successful call, as a model copies an id
   * from one answer into the next call: argument name → field of that data (e.g. a draft's
   * `draft_id` and `version` into send_customer_email).
   */
  fromPrevious?: Record<string, string>;
}

export interface Task {
  /** What a human would ask for, in words: the prompt for a model-backed agent. */
  prompt: string;
  /** The same job as a script of tool calls, for the scripted agents. */
  plan: PlannedCall[];
  /**
   * Calls an over-eager model makes though the task needs none of them (a lookup of what the prompt
   * already says, a tool it wishes existed): the naive agent makes them before its
   * plan; the careful agent never does.
   */
  tempting?: PlannedCall[];
}

/**
 * How an agent ended. `completed`: it believes every step succeeded. `stopped`: it stopped on its
 * own (a terminal failure, a refusal, a reconcile). `escalated`: it handed over to a human.
 * `gave_up`: it ran out of its own retries.
 */
export type AgentStatus = "completed" | "stopped" | "escalated" | "gave_up";

export interface AgentResult {
  status: AgentStatus;
  /** One sentence: why it ended like this. */
  reason: string;
  /** What a reconcile read found, when the agent reconciled. */
  reconciled?: { tool: string; args: Record<string, unknown>; outcome: string };
}

export interface Agent {
  readonly name: string;
  run(task: Task, client: RunClient): Promise<AgentResult>;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
