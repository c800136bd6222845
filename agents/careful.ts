import type { Envelope } from "../src/wire/envelope";
import type { RunClient } from "./client";
import { sendPlanned } from "./parallel";
import { type Agent, type AgentResult, type PlannedCall, sleep, type Task } from "./types";

export interface CarefulAgentOptions {
  /** Retries of one planned call when told `retry`; the proxy's repeat breaker may stop it sooner. */
  retries?: number;
  /** The longest it waits before one retry, whatever `retry_after_ms` asks. */
  maxRetryWaitMs?: number;
  /** How long it waits for a human in all before escalating instead. */
  approvalWaitMs?: number;
  /** Pages of a large result it reads before working from what it has. */
  maxPages?: number;
}

/** What happened to one planned call: done, or the end of the whole task. */
type StepEnd = { done: true; data: unknown } | { done: false; result: AgentResult };

const BASE_BACKOFF_MS = 250;
/** The longest wait `Prefer: wait` allows (src/door/prefer-wait.ts). */
const MAX_PREFER_WAIT_S = 30;

/**
 * An agent loop that reads the envelope: it follows `recommended_next_action`, waits
 * `retry_after_ms` (capped) before a retry, waits for a human within a bounded time (asking again
 * with `Prefer: wait`, so the proxy answers as soon as someone decides and the wait costs no call),
 * reconciles with a read when the outcome of a write is unclear, pages through large results by
 * handle, and stops instead of guessing when it cannot fix what is wrong.
 */
export class CarefulAgent implements Agent {
  readonly name = "careful";
  readonly #options: Required<CarefulAgentOptions>;

  constructor(options: CarefulAgentOptions = {}) {
    this.#options = {
      retries: options.retries ?? 3,
      maxRetryWaitMs: options.maxRetryWaitMs ?? 2_000,
      approvalWaitMs: options.approvalWaitMs ?? 8_000,
      maxPages: options.maxPages ?? 2,
    };
  }

  async run(task: Task, client: RunClient): Promise<AgentResult> {
    let previous: unknown = null;
    for (const step of task.plan) {
      const end = await this.#perform(step, client, previous);
      if (!end.done) return end.result;
      previous = end.data;
    }
    return { status: "completed", reason: "every planned call succeeded" };
  }

  async #perform(step: PlannedCall, client: RunClient, previous: unknown): Promise<StepEnd> {
    let retries = 0;
    let rereadStale = false;
    let waitS: number | undefined;
    let relisted = false;
    const waitingSince = Date.now();
    for (;;) {
      const envelope = await sendPlanned(client, step, previous, waitS === undefined ? {} : { waitS });
      waitS = undefined;
      if (envelope.outcome === "success") {
        // A read older than one the run already saw: read once more rather than act on it.
        if (isStale(envelope) && !rereadStale) {
          rereadStale = true;
          continue;
        }
        await this.#readPages(envelope, client);
        return { done: true, data: envelope.data };
      }
      const error = envelope.error;
      // An outcome this agent does not know is terminal, as the contract says.
      if (!error || envelope.outcome !== "retryable_failure") {
        if (error?.recommended_next_action === "reconcile")
          return this.#reconcile(step, client, error.message);
        // The tool changed under the run, which now knows it: a planned call's arguments are the
        // plan's, so it is made once more as planned; a second refusal ends the step.
        if (error?.recommended_next_action === "list_tools" && !relisted) {
          relisted = true;
          continue;
        }
        return this.#endFor(envelope);
      }
      switch (error.recommended_next_action) {
        case "retry": {
          if (retries >= this.#options.retries) {
            return stop("escalated", `still failing after ${retries} retries: ${error.code}`);
          }
          const backoff = BASE_BACKOFF_MS * 2 ** retries;
          await sleep(Math.min(error.retry_after_ms ?? backoff, this.#options.maxRetryWaitMs));
          retries++;
          continue;
        }
        case "wait_for_approval": {
          const left = this.#options.approvalWaitMs - (Date.now() - waitingSince);
          if (left <= 0) return stop("escalated", "a human has not decided the approval in time");
          // Asks again at once, waiting at the proxy for the decision for what is left of its patience.
          waitS = Math.min(MAX_PREFER_WAIT_S, Math.max(1, Math.ceil(left / 1000)));
          continue;
        }
        case "reconcile":
          return this.#reconcile(step, client, error.message);
        default:
          return this.#endFor(envelope);
      }
    }
  }

  /** The end a terminal answer calls for: a human when told so, else a stop with the reason. */
  #endFor(envelope: Envelope): StepEnd {
    const error = envelope.error;
    if (!error) return stop("stopped", `unknown outcome ${String(envelope.outcome)}`);
    switch (error.recommended_next_action) {
      case "escalate_to_human":
        return stop("escalated", `${error.code}: ${error.message}`);
      case "fix_arguments":
        return stop("stopped", `cannot fix the arguments itself (${error.code})`);
      default:
        return stop("stopped", `${error.code}: ${error.message}`);
    }
  }

  /** The write's fate is unclear: look at the order once, then stop and leave the rest to a human. */
  async #reconcile(step: PlannedCall, client: RunClient, why: string): Promise<StepEnd> {
    const orderId = step.args.order_id;
    if (typeof orderId !== "string") return stop("stopped", `reconcile needed, nothing to read: ${why}`);
    const args = { order_id: orderId };
    const read = await client.call("lookup_order", args);
    return {
      done: false,
      result: {
        status: "stopped",
        reason: `reconciled with lookup_order: ${why}`,
        reconciled: { tool: "lookup_order", args, outcome: read.outcome },
      },
    };
  }

  /** Follows a large result's handle for a few pages: enough to act on, not the whole archive. */
  async #readPages(envelope: Envelope, client: RunClient): Promise<void> {
    const handle = (envelope.data as { handle?: unknown } | null)?.handle;
    if (typeof handle !== "string") return;
    let cursor: number | null = 0;
    for (let page = 0; page < this.#options.maxPages && cursor !== null; page++) {
      const read = await client.call("read_result_page", { handle, cursor });
      if (read.outcome !== "success") return;
      const next = (read.data as { next_cursor?: unknown } | null)?.next_cursor;
      cursor = typeof next === "number" ? next : null;
    }
  }
}

function isStale(envelope: Envelope): boolean {
  const observed = envelope.observed_state as { stale?: unknown } | null;
  return observed?.stale === true;
}

function stop(status: AgentResult["status"], reason: string): StepEnd {
  return { done: false, result: { status, reason } };
}
