import type { SettleVerdict, ToolSpec } from "../catalog/define-tool";
import { resendsInDoubt } from "../catalog/key-promise";
import type { FailureSpec } from "../wire/envelope";

/**
 * What the proxy does with a write whose outcome is unknown (a timeout, a 5xx, a lost connection, an
 * answer cut off, a restart mid-send), by what its upstream promises about the key:
 * - `resend_under_key`: the upstream applies a key once, so the identical call resends the stored
 *   request under the same key and the upstream answers it once;
 * - `settle_by_read`: it does not, and the tool declares the read that finds its effect: nothing is
 *   sent again until that read shows the effect absent;
 * - `reconcile`: it does not, and no read can tell: nothing is sent again; a human settles it.
 * The model is told exactly which, never "it cannot happen twice" of an upstream that ignores keys.
 */
export type InDoubtRule = "resend_under_key" | "settle_by_read" | "reconcile";

type Promising = Pick<ToolSpec, "upstream" | "settle" | "observe">;

export function inDoubtRuleOf(tool: Promising): InDoubtRule {
  if (resendsInDoubt(tool)) return "resend_under_key";
  return tool.settle ? "settle_by_read" : "reconcile";
}

/** The sentence that ends an answer in doubt: what calling again with the same arguments does. */
export function callAgainSentence(tool: Promising): string {
  switch (inDoubtRuleOf(tool)) {
    case "resend_under_key":
      return "Call again with the same arguments: the same idempotency key is sent, so it cannot happen twice.";
    case "settle_by_read":
      return `Call again with the same arguments: its upstream does not honour idempotency keys, so the proxy first reads ${tool.settle?.tool} to find whether it happened, and sends it again only if that read shows it did not.`;
    case "reconcile":
      return `Its upstream does not honour idempotency keys and no read can tell whether it happened, so the proxy will not send it again: check with ${tool.observe?.tool ?? "a read tool"}, or hand over to a human.`;
  }
}

/** What a settling read concluded, as the call's answer: done, not done (so it may be sent), or a human's. */
export type Settled =
  | { kind: "done"; effect_id: string; observed: SettledByRead }
  | { kind: "failure"; failure: FailureSpec };

/** What `observed_state.settled_by_read` says of a settling read. */
export interface SettledByRead {
  settled_by_read: { tool: string; verdict: SettleVerdict["kind"] | "unreadable"; effect_id: string | null };
}

/**
 * The answer to a write in doubt once its settling read has answered (`verdict`, or null when the
 * read itself failed). `doubt` is the failure that left it in doubt (null when the check came
 * before a resend, with nothing sent yet this time).
 */
export function settledAnswer(
  tool: Promising,
  verdict: SettleVerdict | null,
  doubt: FailureSpec | null,
): Settled {
  const reader = tool.settle?.tool ?? "a read";
  const why = doubt ? `${firstClause(doubt.message)}. ` : "";
  const observed = (kind: SettledByRead["settled_by_read"]["verdict"], effect_id: string | null) => ({
    settled_by_read: { tool: reader, verdict: kind, effect_id },
  });
  if (verdict?.kind === "found") {
    return { kind: "done", effect_id: verdict.effect_id, observed: observed("found", verdict.effect_id) };
  }
  if (verdict?.kind === "absent") {
    return {
      kind: "failure",
      failure: {
        code: doubt?.code ?? "transient_error",
        message: `${why}A read of ${reader} shows it did not happen, so nothing was done. Call again with the same arguments to send it: its upstream does not honour idempotency keys, so the proxy reads ${reader} once more first, and sends it only if that read still shows it did not happen.`,
        side_effect_confirmed: false,
        recommended_next_action: "retry",
        outcome: "retryable_failure",
        retry_after_ms: doubt?.retry_after_ms ?? null,
        details: { ...doubt?.details, ...observed("absent", null) },
      },
    };
  }
  const unknown = verdict?.kind === "unclear" ? verdict.why : `the read of ${reader} failed`;
  return {
    kind: "failure",
    failure: {
      code: doubt?.code ?? "terminal_error",
      message: `${why}Whether it happened is unknown (${unknown}), and its upstream does not honour idempotency keys, so the proxy will not send it again unless a later read of ${reader} shows it did not happen: a human settles it.`,
      side_effect_confirmed: null,
      recommended_next_action: "reconcile",
      outcome: "terminal_failure",
      details: {
        ...doubt?.details,
        ...observed(verdict === null ? "unreadable" : "unclear", null),
        resend: "never without a read that shows it did not happen",
      },
    },
  };
}

/**
 * A write in doubt against an upstream that ignores keys and a tool that declares no settling read:
 * its failure, told that nothing will be resent, for a human to reconcile (the key stays in doubt).
 */
export function unsettledAnswer(tool: Promising, doubt: FailureSpec): FailureSpec {
  return {
    ...doubt,
    message: `${firstClause(doubt.message)}; whether it acted is unknown. ${callAgainSentence(tool)}`,
    side_effect_confirmed: null,
    recommended_next_action: "reconcile",
    outcome: "terminal_failure",
    details: { ...doubt.details, resend: "never: the upstream does not honour idempotency keys" },
  };
}

/** What went wrong, from a failure's message: its first clause, before what it told the model to do. */
function firstClause(message: string): string {
  return (message.split(";")[0] ?? message).replace(/\.$/, "");
}
