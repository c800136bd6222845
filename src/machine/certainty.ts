import type { Envelope } from "../wire/envelope";
import type { CallRecord } from "./run-state";

/**
 * Certainty only moves up. `classifyUpstream` reads one answer on its own: a 429 or a 4xx says
 * "nothing was done" for that request. On a resend of a key whose earlier send may have acted (its
 * answer was unknown, or a restart cut it off), that says nothing about the earlier send: a
 * rate limiter answers before the application, and a 422 "over the refundable amount" may be the
 * earlier refund's doing. So the answer is folded with the key's history here, once, for every
 * event that settles a key: "not done" stands only on a first send, after sends known not to have
 * acted, or when a read proved the effect absent; otherwise the effect is unknown and the key stays
 * in doubt, where the next identical call resends the stored bytes and the upstream's replay (or a
 * postcondition) can settle it.
 */

/** What the earlier sends under a key showed, as its record holds them when another send settles. */
export type KeyHistory =
  /** No send before this one. */
  | "first_send"
  /** Every earlier send is known not to have acted (a 429 the rate limiter answered). */
  | "did_not_act"
  /** An earlier send may have acted: its answer was unknown, or a restart cut it off unanswered. */
  | "may_have_acted";

/**
 * The history of a key from its record as the ledger reads it when a send settles: `sends` counts
 * this send already (the ledger records a send before its request leaves), and `envelope` is the
 * previous settlement's answer, kept while the key is in doubt.
 */
export function keyHistory(record: Pick<CallRecord, "sends" | "envelope"> | null): KeyHistory {
  if (record === null || record.sends <= 1) return "first_send";
  // A resend with no earlier answer kept: the earlier send was cut off by a restart before it
  // settled (or settled before answers in doubt were kept); either way it may have reached the upstream.
  const earlier = record.envelope;
  if (earlier === null) return "may_have_acted";
  return earlier.outcome !== "success" && earlier.error?.side_effect_confirmed === false
    ? "did_not_act"
    : "may_have_acted";
}

/** A key's answer once its history is folded in, and the state the key is left in. */
export interface SettledKey {
  envelope: Envelope;
  state: "in_doubt" | "completed";
}

/**
 * Folds a send's answer with the key's history. A key completes only on a certain answer (done,
 * or proven not done); an unknown one, retryable or not, leaves it in doubt so it can still be
 * settled by a later send. A "not done" that only a status code says, after a send that may have
 * acted, becomes unknown: `side_effect_confirmed: null`, with `retry` for a retryable answer and
 * `reconcile` for the rest.
 */
export function settleCertainty(
  history: KeyHistory,
  envelope: Envelope,
  /** What calling again does for this call's tool (`in-doubt.ts`); the key's resend by default. */
  callAgain = "Call again with the same arguments: the same idempotency key is sent, so it cannot happen twice.",
): SettledKey {
  const { error } = envelope;
  if (envelope.outcome === "success" || error === null) return { envelope, state: "completed" };
  if (error.side_effect_confirmed === false && history === "may_have_acted" && !refutedByRead(envelope)) {
    const next = error.retryable ? callAgain : "Check the state with a read tool before acting again.";
    return {
      state: "in_doubt",
      envelope: {
        ...envelope,
        error: {
          ...error,
          message: `${error.message} An earlier attempt of this call may already have acted, so whether it happened is unknown. ${next}`,
          side_effect_confirmed: null,
          recommended_next_action: error.retryable ? "retry" : "reconcile",
          details: { ...error.details, earlier_attempt_may_have_acted: true },
        },
      },
    };
  }
  const certain = envelope.outcome !== "retryable_failure" && error.side_effect_confirmed !== null;
  return { envelope, state: certain ? "completed" : "in_doubt" };
}

/**
 * A "not done" that a read established: the postcondition looked and found no trace of the
 * effect (`silent_failure`), which is the one kind of "false" no earlier send can weaken.
 */
function refutedByRead(envelope: Envelope): boolean {
  return envelope.error?.code === "silent_failure" && envelope.error.side_effect_confirmed === false;
}
