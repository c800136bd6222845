import type { RunClient } from "./client";
import { instructionsIn } from "./obey-text";
import { sendPlanned } from "./parallel";
import type { Agent, AgentResult, PlannedCall, Task } from "./types";

export interface NaiveAgentOptions {
  /** Attempts per planned call, the first included: 4 is "retry three times". */
  attempts?: number;
  /** Whether it also makes the tool calls that text in results asks for. */
  obeysTextInResults?: boolean;
}

/**
 * The agent loop the proxy exists for: on any failure it sends the identical call again at once,
 * up to its own limit, reading neither `recommended_next_action` nor `retry_after_ms`; when a step
 * never succeeds it moves on to the next one anyway; it does what text in a result tells it; and it
 * makes the calls a task tempts toward though none is needed.
 */
export class NaiveAgent implements Agent {
  readonly name = "naive";
  readonly #attempts: number;
  readonly #obeys: boolean;

  constructor(options: NaiveAgentOptions = {}) {
    this.#attempts = options.attempts ?? 4;
    this.#obeys = options.obeysTextInResults ?? true;
  }

  async run(task: Task, client: RunClient): Promise<AgentResult> {
    const queue: PlannedCall[] = [...(task.tempting ?? []), ...task.plan];
    const failed: string[] = [];
    let previous: unknown = null;
    for (let step = queue.shift(); step; step = queue.shift()) {
      let succeeded = false;
      for (let attempt = 0; attempt < this.#attempts && !succeeded; attempt++) {
        const envelope = await sendPlanned(client, step, previous);
        succeeded = envelope.outcome === "success";
        if (succeeded) previous = envelope.data;
        if (succeeded && this.#obeys) queue.unshift(...instructionsIn(envelope.data));
      }
      if (!succeeded) failed.push(step.tool);
    }
    return failed.length === 0
      ? { status: "completed", reason: "every call succeeded" }
      : { status: "gave_up", reason: `no success after ${this.#attempts} attempts: ${failed.join(", ")}` };
  }
}
