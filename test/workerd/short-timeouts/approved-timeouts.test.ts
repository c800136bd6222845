import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../../src/catalog/define-tool";
import { catalog } from "../../../src/tools";
import {
  asOperator,
  callTool,
  decide,
  openRun,
  refundsOfRun,
  runOutIdempotencyLease,
  sandboxRequests,
  type TestRun,
} from "../helpers";

/**
 * Exactly-once when an approved execution outlives its tool's timeout: the proxy gives up without
 * knowing the outcome, and the agent's identical resend settles it. Run against the test catalog
 * (./catalog.ts), so a timeout passes in a moment; the sandbox's records say what really happened.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** issue_refund's timeout in this project's catalog. */
const REFUND_TIMEOUT_MS = (catalog.find("support", "issue_refund") as ToolSpec).timeout_ms;
/** Far longer than the timeout: the upstream is still busy when the proxy gives up. */
const HANG_MS = 9_500;

const refund = (order_id: string, amount_cents: number) => ({
  order_id,
  amount_cents,
  reason: "user_cancel",
});

async function approvalStateOf(id: string): Promise<string> {
  const { status, body } = await asOperator(`/v1/approvals/${id}`);
  expect(status, JSON.stringify(body.error)).toBe(200);
  return (body.data as { approval: { state: string } }).approval.state;
}

async function refundRequestsOf(run: TestRun) {
  return (await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds");
}

/**
 * The operator approves; by the time this returns, the execution the approval started has outlived
 * issue_refund's timeout. The approval answers once the proxy gave up, so what is left to wait is
 * the margin at most.
 */
async function approveAndOutwaitTheTimeout(approvalId: string): Promise<void> {
  const began = Date.now();
  // The tests of this file refund A1002 in several runs: the operator confirms they saw the others.
  await decide(approvalId, "approve", undefined, "acme", { confirm_duplicate: true });
  await sleep(Math.max(0, began + REFUND_TIMEOUT_MS + 250 - Date.now()));
}

describe("1. an approved call whose execution timed out is settled by the agent's identical resend", () => {
  it("slow_success: the approved refund took effect upstream after the proxy timed out; the identical resend answers success from the same key, never validation_error, and the sandbox holds one refund", async () => {
    const run = await openRun("acme", {
      namespace: "support",
      scenario: [{ mode: "slow_success", tool: "issue_refund", hang_ms: HANG_MS }],
    });
    const args = refund("A1002", 500);
    const asked = await callTool(run, "issue_refund", args);
    expect(asked.body.error?.code).toBe("approval_required");
    const id = asked.body.approval?.id ?? "";

    await approveAndOutwaitTheTimeout(id);
    // The execution outlived the refund's timeout, so the proxy cannot know its outcome; the sandbox acted.
    expect(await refundsOfRun("A1002", run)).toHaveLength(1);

    const resent = await callTool(run, "issue_refund", args);
    expect(resent.body.error?.code, JSON.stringify(resent.body.error)).not.toBe("validation_error");
    expect(resent.status).not.toBe(422);
    expect(resent.body.outcome, JSON.stringify(resent.body.error)).toBe("success");

    const refunds = await refundsOfRun("A1002", run);
    expect(refunds).toHaveLength(1);
    expect((resent.body.data as { refund_id: string }).refund_id).toBe(refunds[0]?.refund_id);
    const sent = await refundRequestsOf(run);
    expect(sent.map((entry) => entry.status)).not.toContain(422);
    expect(new Set(sent.map((entry) => entry.idempotency_key))).toEqual(
      new Set([resent.body.idempotency_key]),
    );
    expect(await approvalStateOf(id)).toBe("executed");
  });

  it("hang: the approved refund timed out before it ran; the identical resend executes it once, answers success, and the approval ends executed", async () => {
    const run = await openRun("acme", {
      namespace: "support",
      scenario: [{ mode: "hang", tool: "issue_refund", hang_ms: HANG_MS }],
    });
    const args = refund("A1002", 501);
    const asked = await callTool(run, "issue_refund", args);
    expect(asked.body.error?.code).toBe("approval_required");
    const id = asked.body.approval?.id ?? "";

    await approveAndOutwaitTheTimeout(id);
    // The aborted request never ran upstream: it stays `started`, with no refund.
    expect(await refundsOfRun("A1002", run)).toHaveLength(0);
    const [aborted] = await refundRequestsOf(run);
    expect(aborted).toMatchObject({ fault: "hang", phase: "started" });

    // The sandbox holds the aborted request's key for its lease, like a real upstream's lock; the
    // lease runs out (its stored clock passes it) instead of the test waiting for it.
    await runOutIdempotencyLease(run.tenant, aborted?.idempotency_key ?? "");
    const resent = await callTool(run, "issue_refund", args);
    expect(resent.body.error?.code, JSON.stringify(resent.body.error)).not.toBe("validation_error");
    expect(resent.body.outcome, JSON.stringify(resent.body.error)).toBe("success");

    const refunds = await refundsOfRun("A1002", run);
    expect(refunds).toHaveLength(1);
    expect((resent.body.data as { refund_id: string }).refund_id).toBe(refunds[0]?.refund_id);
    const sent = await refundRequestsOf(run);
    expect(sent.map((entry) => entry.status)).not.toContain(422);
    expect(new Set(sent.map((entry) => entry.idempotency_key))).toEqual(
      new Set([resent.body.idempotency_key]),
    );
    expect(await approvalStateOf(id)).toBe("executed");
  });
});
