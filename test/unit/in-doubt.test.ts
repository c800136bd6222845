import { describe, expect, it } from "vitest";
import type { KeyPromise, SettleRead, ToolSpec } from "../../src/catalog/define-tool";
import { callAgainSentence, inDoubtRuleOf, settledAnswer, unsettledAnswer } from "../../src/machine/in-doubt";
import type { FailureSpec } from "../../src/wire/envelope";

type Promising = Pick<ToolSpec, "upstream" | "settle" | "observe">;

const promise = (honoured: boolean): KeyPromise => ({
  header: "Idempotency-Key",
  honoured,
  basis: "declared",
  retention_ms: null,
});
const settle: SettleRead = { tool: "lookup_order", args: (args) => args, judge: () => ({ kind: "absent" }) };
const upstream = (honoured: boolean): Promising["upstream"] => ({
  binding: "PAYMENTS_API",
  request: () => ({ method: "POST", path: "/refunds" }),
  idempotency: promise(honoured),
});

const honouring: Promising = { upstream: upstream(true), settle: null, observe: null };
const settling: Promising = { upstream: upstream(false), settle, observe: null };
const ignoring: Promising = { upstream: upstream(false), settle: null, observe: null };

const doubt: FailureSpec = {
  code: "transient_error",
  message:
    "The upstream failed temporarily; it may or may not have acted. Call again with the same arguments: it cannot happen twice.",
  side_effect_confirmed: null,
  details: { upstream_status: 503 },
};

describe("a write in doubt", () => {
  it("is resent under its key, settled by a read, or left to a human, by what its upstream promises", () => {
    expect(inDoubtRuleOf(honouring)).toBe("resend_under_key");
    expect(inDoubtRuleOf(settling)).toBe("settle_by_read");
    expect(inDoubtRuleOf(ignoring)).toBe("reconcile");
  });

  it("promises 'it cannot happen twice' only of an upstream that honours keys", () => {
    expect(callAgainSentence(honouring)).toContain("cannot happen twice");
    expect(callAgainSentence(settling)).not.toContain("cannot happen twice");
    expect(callAgainSentence(settling)).toContain("first reads lookup_order");
    expect(callAgainSentence(ignoring)).toContain("will not send it again");
  });

  it("completes with the effect's id when the read finds it", () => {
    expect(settledAnswer(settling, { kind: "found", effect_id: "re_1" }, doubt)).toEqual({
      kind: "done",
      effect_id: "re_1",
      observed: { settled_by_read: { tool: "lookup_order", verdict: "found", effect_id: "re_1" } },
    });
  });

  it("says nothing was done, and that a resend reads again first, when the read proves it absent", () => {
    const settled = settledAnswer(settling, { kind: "absent" }, doubt);
    expect(settled).toMatchObject({
      kind: "failure",
      failure: {
        code: "transient_error",
        side_effect_confirmed: false,
        recommended_next_action: "retry",
        outcome: "retryable_failure",
        details: { upstream_status: 503, settled_by_read: { verdict: "absent" } },
      },
    });
    if (settled.kind !== "failure") throw new Error("a failure");
    expect(settled.failure.message).toMatch(
      /^The upstream failed temporarily\. A read of lookup_order shows it did not happen/,
    );
    expect(settled.failure.message).not.toContain("cannot happen twice");
  });

  it("goes to a human, still in doubt, when the read fails or cannot tell", () => {
    for (const verdict of [null, { kind: "unclear" as const, why: "2 items of refunds match this call" }]) {
      const settled = settledAnswer(settling, verdict, doubt);
      expect(settled).toMatchObject({
        kind: "failure",
        failure: {
          side_effect_confirmed: null,
          recommended_next_action: "reconcile",
          outcome: "terminal_failure",
        },
      });
    }
    const unclear = settledAnswer(
      settling,
      { kind: "unclear", why: "2 items of refunds match this call" },
      null,
    );
    if (unclear.kind !== "failure") throw new Error("a failure");
    expect(unclear.failure.message).toContain("(2 items of refunds match this call)");
  });

  it("without a read that settles it, is never resent and says so", () => {
    const answer = unsettledAnswer(ignoring, doubt);
    expect(answer).toMatchObject({
      side_effect_confirmed: null,
      recommended_next_action: "reconcile",
      outcome: "terminal_failure",
      details: { resend: "never: the upstream does not honour idempotency keys" },
    });
    expect(answer.message).not.toContain("cannot happen twice");
  });
});
