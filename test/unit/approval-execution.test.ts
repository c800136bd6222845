import { describe, expect, it } from "vitest";
import { decisionAnswer } from "../../src/approvals/decision-answer";
import { executionOf, executionOfState } from "../../src/approvals/execution";
import { type ApprovalRecord, isOlderSummary } from "../../src/approvals/model";
import { approvalBadge } from "../../src/console/views/approval-badge";
import { reconcileInterrupted } from "../../src/machine/run-events";
import { newRun } from "../../src/machine/run-state";
import { type EnvelopeContext, failure, success } from "../../src/wire/envelope";
import { pendingApproval } from "./support/pending-approval";

/**
 * What an approval's call did (executed, refused, not sent, in doubt), told apart from its state,
 * and what an operator's decision answers with it.
 */

const ctx: EnvelopeContext = { call_id: "call_1", environment: "sandbox", tool: "issue_refund" };
const T0 = Date.parse("2026-05-01T10:00:00.000Z");

function approval(change: Partial<ApprovalRecord>): ApprovalRecord {
  return {
    ...pendingApproval({
      tool: { name: "issue_refund", side_effect: "destructive" },
      run_id: "run_1",
      key: "key_1",
      args: { order_id: "A1005", amount_cents: 100 },
      digest: "digest_1",
      policy: "policy_1",
      requirement: { roles: [], approvals: 1 },
      t0: T0,
    }),
    ...change,
  };
}

const refused = failure(ctx, {
  code: "conflict_error",
  message: "The order is cancelled.",
  side_effect_confirmed: false,
});
const drifted = failure(ctx, { code: "upstream_changed", message: "The remote tool changed." });
const unknown = failure(ctx, { code: "timeout", message: "No answer in time.", side_effect_confirmed: null });

describe("what a settled call did", () => {
  it("tells a success, an upstream's refusal, the proxy's refusal before sending and an unknown apart", () => {
    expect(executionOf(success(ctx, { refund_id: "re_1" }))).toBe("executed");
    expect(executionOf(refused)).toBe("refused");
    expect(executionOf(drifted)).toBe("not_sent");
    expect(executionOf(unknown)).toBe("in_doubt");
  });

  it("takes a failure that says the effect happened as executed, and a key left in doubt as in doubt", () => {
    const partial = failure(ctx, {
      code: "partial_success",
      message: "Some items.",
      side_effect_confirmed: true,
    });
    expect(executionOf(partial)).toBe("executed");
    expect(executionOf(refused, "in_doubt")).toBe("in_doubt");
  });

  it("reads an approval that recorded none from its state: nothing yet, never sent, or its result", () => {
    expect(executionOfState("pending", null)).toBeNull();
    expect(executionOfState("approved", null)).toBeNull();
    expect(executionOfState("rejected", null)).toBe("not_sent");
    expect(executionOfState("expired", null)).toBe("not_sent");
    expect(executionOfState("executed", refused)).toBe("refused");
    expect(executionOfState("executed", null)).toBeNull();
  });
});

describe("what an operator's decision answers", () => {
  it("is a success for a decision that sent nothing, or whose call executed", () => {
    for (const decided of [
      approval({ state: "rejected", execution: "not_sent" }),
      approval({ state: "pending", execution: null }),
      approval({ state: "executed", execution: "executed", result: success(ctx, {}) }),
    ]) {
      const answer = decisionAnswer(ctx, decided);
      expect(answer.outcome).toBe("success");
      expect(answer.data).toEqual({ approval: decided });
    }
  });

  it("is the call's failure when the upstream refused it or it was not sent, with the approval still in data", () => {
    const decided = approval({ state: "executed", execution: "refused", result: refused });
    const answer = decisionAnswer(ctx, decided);
    expect(answer).toMatchObject({
      outcome: "terminal_failure",
      data: { approval: decided },
      error: {
        code: "conflict_error",
        side_effect_confirmed: false,
        recommended_next_action: "stop",
        details: { execution: "refused", approval_id: decided.id },
      },
    });
    expect(answer.error?.message).toBe(
      "Approved, but the upstream refused the call; nothing was done: The order is cancelled.",
    );
    const notSent = decisionAnswer(
      ctx,
      approval({ state: "executed", execution: "not_sent", result: drifted }),
    );
    expect(notSent.error).toMatchObject({ code: "upstream_changed", details: { execution: "not_sent" } });
  });

  it("is an unknown effect for a call in doubt, from the call's answer when the decision sent it", () => {
    const decided = approval({ state: "approved", execution: "in_doubt" });
    const answer = decisionAnswer(ctx, decided, unknown);
    expect(answer.outcome).toBe("retryable_failure");
    expect(answer.error).toMatchObject({
      code: "timeout",
      side_effect_confirmed: null,
      recommended_next_action: "reconcile",
      details: { execution: "in_doubt" },
    });
    // Another operator's late approval finds it in doubt with no answer of its own: still not success.
    expect(decisionAnswer(ctx, decided).error).toMatchObject({
      code: "transient_error",
      side_effect_confirmed: null,
    });
  });
});

describe("the directory's copy of an approved call", () => {
  it("takes a copy that does not yet know its call is in doubt as older", () => {
    const approved = { state: "approved" as const, approved: 0, decided_at: "2026-05-01T10:00:00.000Z" };
    expect(isOlderSummary({ ...approved, execution: null }, { ...approved, execution: "in_doubt" })).toBe(
      true,
    );
    expect(isOlderSummary({ ...approved, execution: "in_doubt" }, { ...approved, execution: null })).toBe(
      false,
    );
  });
});

describe("the alarm's reconciliation of a send a restart cut off", () => {
  it("records an approved call's approval as in doubt with its key", () => {
    const run = newRun(
      {
        tenant: "acme",
        run_id: "run_1",
        namespace: "support",
        limits: { max_calls: 10, max_writes: 5, max_destructive: 2, deadline_s: 600 },
        repeat_threshold: 3,
      },
      "sandbox",
      { catalog_version: "v1", tool_versions: {} },
      T0,
    );
    const record = {
      key: "key_1",
      tool: "issue_refund",
      side_effect: "destructive" as const,
      state: "sending" as const,
      request: { method: "POST" as const, target: "/refunds", headers: {}, body: "{}" },
      envelope: null,
      sends: 1,
    };
    const approved = approval({ state: "approved", execution: null });
    const writes = reconcileInterrupted(
      { run, open: [], sending: [record], inflight: new Set(), approvals: new Map([["key_1", approved]]) },
      T0 + 1000,
      () => "Call again.",
    );
    expect(writes.map((write) => write.kind)).toEqual(["key_settle", "approval_in_doubt"]);
  });
});

describe("an approval's badge", () => {
  it("says what an executed approval's call did, and keeps the state otherwise", () => {
    expect(approvalBadge({ state: "executed", execution: "executed" }).label).toBe("executed");
    expect(approvalBadge({ state: "executed", execution: "refused" }).label).toBe("refused by upstream");
    expect(approvalBadge({ state: "executed", execution: "not_sent" }).label).toBe("not sent");
    expect(approvalBadge({ state: "approved", execution: "in_doubt" }).label).toBe("in doubt");
    expect(approvalBadge({ state: "approved", execution: null }).label).toBe("approved");
    expect(approvalBadge({ state: "rejected", execution: "not_sent" }).label).toBe("rejected");
    // Settled before executions were recorded: the state is all there is to show.
    expect(approvalBadge({ state: "executed", execution: null }).label).toBe("executed");
  });
});
