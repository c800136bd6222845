import { canonicalJson } from "../src/core/canonical-json";
import type { Envelope } from "../src/wire/envelope";
import type { RunClient } from "./client";
import { type AgentResult, sleep } from "./types";

/**
 * What a model's tool loop does with the envelope's `recommended_next_action` between the model and
 * the proxy, since a model can neither sleep nor send headers: a call the proxy said to retry goes
 * out again no sooner than its `retry_after_ms`; a call waiting for a human is asked again at once
 * with `Prefer: wait`, so the proxy answers when someone decides and the wait costs no call; a call
 * the proxy ended for good (a terminal failure) is not sent again, and the model is told so. The
 * model's arguments go to the proxy exactly as written: nothing is added to them, ever.
 */

/** The longest wait `Prefer: wait` allows (src/door/prefer-wait.ts). */
const MAX_PREFER_WAIT_S = 30;

interface Answered {
  envelope: Envelope;
  at: number;
}

/** What makes two calls the same call: the tool and its arguments, canonical when they are JSON. */
function identityOf(tool: string, args: unknown): string {
  try {
    return `${tool} ${canonicalJson(args)}`;
  } catch {
    return `${tool} ${String(args)}`;
  }
}

export class EnvelopeGuide {
  readonly #maxWaitMs: number;
  readonly #last = new Map<string, Answered>();
  /** Every call's latest answer, in the order they arrived: how the loop ended. */
  readonly #answers: Array<{ identity: string; envelope: Envelope }> = [];

  constructor(maxWaitMs: number) {
    this.#maxWaitMs = maxWaitMs;
  }

  /** Sends one tool call as the envelopes so far say, and returns what the model is given back. */
  async send(client: RunClient, tool: string, args: unknown): Promise<string> {
    const identity = identityOf(tool, args);
    const last = this.#last.get(identity);
    if (last?.envelope.outcome === "terminal_failure") {
      return JSON.stringify({
        not_sent: true,
        reason: `The identical call already ended with ${last.envelope.error?.code} (next: ${last.envelope.error?.recommended_next_action}); it was not sent again.`,
      });
    }
    const hint =
      last?.envelope.error?.recommended_next_action === "retry" ? last.envelope.error.retry_after_ms : null;
    if (last && hint) {
      const due = last.at + hint - Date.now();
      if (due > 0) await sleep(Math.min(due, this.#maxWaitMs));
    }
    let envelope = await client.call(tool, args);
    if (envelope.error?.recommended_next_action === "wait_for_approval") {
      // Told to wait for a human: wait at the proxy for the decision, once, within this loop's patience.
      const waitS = Math.min(MAX_PREFER_WAIT_S, Math.max(1, Math.ceil(this.#maxWaitMs / 1000)));
      envelope = await client.call(tool, args, { waitS });
    }
    this.#last.set(identity, { envelope, at: Date.now() });
    this.#answers.push({ identity, envelope });
    return JSON.stringify(envelope);
  }

  /**
   * How the loop ended when the model answered in words: completed, unless a call's latest answer
   * was a failure no later success of that call made good; then as that failure tells.
   */
  ending(summary: string): AgentResult {
    const open = [...this.#answers]
      .reverse()
      .find(
        ({ identity, envelope }) =>
          envelope.outcome !== "success" && this.#last.get(identity)?.envelope === envelope,
      );
    const reason = summary.slice(0, 300) || "no summary";
    if (!open) return { status: "completed", reason };
    switch (open.envelope.error?.recommended_next_action) {
      case "escalate_to_human":
      case "wait_for_approval":
        return { status: "escalated", reason };
      case "retry":
        return { status: "gave_up", reason };
      default:
        return { status: "stopped", reason };
    }
  }
}
