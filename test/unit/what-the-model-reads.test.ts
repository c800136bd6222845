import { describe, expect, it } from "vitest";
import { APPROVAL_POLL_MS } from "../../src/approvals/model";
import { DEFAULT_RATE_LIMITS } from "../../src/config/rate-settings";
import { budgetLeft } from "../../src/machine/budget";
import { validateArguments } from "../../src/machine/validate";
import { toCallToolResult } from "../../src/mcp/call-result";
import { rateRefusal } from "../../src/ratelimit/admission";
import { catalog } from "../../src/tools";
import { type Envelope, type EnvelopeContext, failure, success } from "../../src/wire/envelope";

/**
 * Many MCP clients hand the model only the `content` text of a tool result, never
 * `structuredContent`. So the text of every outcome class carries what the model needs to act: the
 * result or the problems, what to do next and when, a pending approval's id and expiry, and the
 * budget left. The full envelope still travels, unchanged, in `structuredContent`.
 */

const NOW = Date.UTC(2026, 6, 1, 12, 0, 0);
const LIMITS = { max_calls: 20, max_writes: 5, max_destructive: 2, deadline_s: 1800 };
// 3 calls, 1 write and 1 destructive action spent; 29 min 40 s to the deadline.
const BUDGET = budgetLeft(
  LIMITS,
  { calls_used: 3, writes_used: 1, destructive_used: 1 },
  NOW + (29 * 60 + 40) * 1000,
  NOW,
);
const BUDGET_TEXT =
  "Budget left: 17 calls, 4 writes, 1 destructive action, 29 min 40 s until the run's deadline.";

const ctx = (extra: Partial<EnvelopeContext> = {}): EnvelopeContext => ({
  call_id: "call_1",
  environment: "sandbox",
  tool: "issue_refund",
  idempotency_key: "idk_1",
  budget: BUDGET,
  ...extra,
});

function read(envelope: Envelope): string {
  const result = toCallToolResult(envelope);
  // The whole envelope is still there for clients that read it.
  expect(result.structuredContent).toEqual(envelope);
  const [block] = result.content;
  if (block?.type !== "text") throw new Error("the first content block is not text");
  return block.text;
}

describe("the content text a model reads", () => {
  it("success: says it succeeded, the budget left and the result", () => {
    const envelope = success(ctx({ tool: "lookup_order" }), { order_id: "A1001", status: "shipped" });
    const text = read(envelope);
    expect(toCallToolResult(envelope).isError).toBe(false);
    expect(text).toBe(
      `lookup_order succeeded. ${BUDGET_TEXT} Result: {"order_id":"A1001","status":"shipped"}`,
    );
  });

  it("replayed success: says nothing ran again, names the granted approval, and the budget", () => {
    const text = read(
      success(
        ctx({
          replayed: true,
          approval: { id: "apr_7", state: "executed", expires_at: "2026-07-02T12:00:00.000Z" },
        }),
        { refund_id: "rf_1" },
      ),
    );
    expect(text).toContain(
      "issue_refund succeeded (replayed: this exact call already ran in this run; nothing ran again).",
    );
    expect(text).toContain("Approval apr_7 was granted and the call executed.");
    expect(text).toContain(BUDGET_TEXT);
    expect(text).toContain('Result: {"refund_id":"rf_1"}');
  });

  it.each([
    ["refused", "was granted, but the upstream refused the call: it did not take effect", false],
    ["not_sent", "was granted, but the call was not sent: nothing was done", false],
    ["in_doubt", "was granted, but whether the call took effect is unknown", null],
  ] as const)(
    "an approved call that did not execute (%s): says what it did, never that it executed",
    (execution, said, confirmed) => {
      const state = execution === "in_doubt" ? "approved" : "executed";
      const text = read(
        failure(
          ctx({ approval: { id: "apr_8", state, expires_at: "2026-07-02T12:00:00.000Z", execution } }),
          {
            code: execution === "not_sent" ? "upstream_changed" : "terminal_error",
            message: "The upstream said no.",
            side_effect_confirmed: confirmed,
          },
        ),
      );
      expect(text).toContain(`Approval apr_8 ${said}.`);
      expect(text).not.toContain("executed");
    },
  );

  it("approval_required: names the approval, its expiry and when to call again", () => {
    const text = read(
      failure(ctx({ approval: { id: "apr_42", state: "pending", expires_at: "2026-07-02T12:00:00.000Z" } }), {
        code: "approval_required",
        message:
          "A human must approve this issue_refund call (refund). Wait, then make the identical call again to get its result.",
        retry_after_ms: APPROVAL_POLL_MS,
      }),
    );
    expect(text).toContain("issue_refund failed with approval_required (retryable_failure).");
    expect(text).toContain(
      "Approval apr_42 is waiting for a human; it expires at 2026-07-02T12:00:00.000Z; call again in 30 s with the same arguments.",
    );
    expect(text).toContain("Next: wait_for_approval.");
    expect(text).toContain(BUDGET_TEXT);
  });

  it("a final refusal while an approval waits names it, without inviting a second call", () => {
    const text = read(
      failure(ctx({ approval: { id: "apr_5", state: "pending", expires_at: "2026-07-02T12:00:00.000Z" } }), {
        code: "run_closed",
        message: "The run has ended.",
      }),
    );
    expect(text).toContain("Approval apr_5 is waiting for a human; it expires at 2026-07-02T12:00:00.000Z.");
    expect(text).not.toContain("call again");
    expect(text).toContain("Next: stop.");
  });

  it("retryable failure: says when to call again", () => {
    const text = read(
      failure(ctx({ tool: "lookup_order" }), {
        code: "transient_error",
        message: "The upstream answered 503.",
        retry_after_ms: 1_500,
      }),
    );
    expect(text).toContain(
      "lookup_order failed with transient_error (retryable_failure). The upstream answered 503.",
    );
    expect(text).toContain("Next: retry (call again in 2 s).");
    expect(text).toContain(BUDGET_TEXT);
  });

  it("validation_error: names every problem's field, what is wrong and what is allowed, and the next step", () => {
    const refund = catalog.find("support", "issue_refund");
    if (!refund) throw new Error("the demo catalog has no issue_refund");
    const checked = validateArguments(refund.input, { order_id: "A1001", amount_cents: "12" });
    if (checked.ok) throw new Error("invalid arguments passed validation");
    const text = read(
      failure(ctx(), {
        code: "validation_error",
        message: "The arguments are not valid.",
        problems: checked.problems,
      }),
    );
    expect(text).toContain("issue_refund failed with validation_error (terminal_failure).");
    expect(text).toContain("amount_cents: expected number, got string");
    expect(text).toMatch(
      /reason: missing required field \(Allowed values: "user_cancel", "out_of_stock", "price_error"\./,
    );
    expect(text).toContain("Next: fix_arguments.");
    expect(text).toContain(BUDGET_TEXT);
  });

  it("terminal failure: the message and the next step, no invitation to call again", () => {
    const text = read(
      failure(ctx({ approval: { id: "apr_9", state: "rejected", expires_at: "2026-07-02T12:00:00.000Z" } }), {
        code: "approval_rejected",
        message: 'An operator rejected this call. Operator\'s reason: "duplicate". It was not executed.',
      }),
    );
    expect(text).toContain('Operator\'s reason: "duplicate"');
    expect(text).toContain("Approval apr_9 was rejected.");
    expect(text).toContain("Next: escalate_to_human.");
    expect(text).not.toContain("call again");
    expect(text).toContain(BUDGET_TEXT);
  });

  it("rate_limited: the limit, when to call again, and the budget", () => {
    const spec = rateRefusal("run_calls", DEFAULT_RATE_LIMITS, 2_400);
    const text = read(failure(ctx({ tool: "lookup_order" }), spec));
    expect(text).toContain("lookup_order failed with rate_limited (retryable_failure).");
    expect(text).toContain("Next: retry (call again in 3 s).");
    expect(text).toContain(BUDGET_TEXT);
  });

  it("an answer outside any run says nothing of a budget", () => {
    const text = read(failure(ctx({ budget: null }), { code: "permission_error", message: "Unknown key." }));
    expect(text).toBe(
      "issue_refund failed with permission_error (terminal_failure). Unknown key. Next: stop.",
    );
  });

  it.each([
    [0, "0 s"],
    [999, "0 s"],
    [40_000, "40 s"],
    [3_600_000, "1 h"],
    [3_900_000, "1 h 5 min"],
    [3_605_000, "1 h"],
  ])("a deadline %i ms away reads %s", (ms, words) => {
    const text = read(success(ctx({ budget: { ...BUDGET, deadline_ms_left: ms } }), null));
    expect(text).toContain(`1 destructive action, ${words} until the run's deadline.`);
  });
});
