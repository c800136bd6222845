import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../src/approvals/model";
import { type DecisionContext, planDecision } from "../src/ledger/approval-gate";
import { catalog } from "../src/tools";

const now = Date.parse("2026-11-30T00:00:00Z");

const pending: ApprovalRecord = {
  id: "apr_1",
  tenant: "acme",
  run_id: "run_1",
  tool: "issue_refund",
  side_effect: "destructive",
  idempotency_key: "idk_1",
  args: { order_id: "A1001", amount_cents: 100, reason: "user_cancel" },
  args_digest: "d",
  policy_version: "pol_now",
  reasons: ["destructive tools need a human approval"],
  state: "pending",
  requested_call_id: "call_1",
  created_at: new Date(now - 1_000).toISOString(),
  expires_at: new Date(now + 60_000).toISOString(),
  decided_at: null,
  decided_by: null,
  decision_reason: null,
  result: null,
};

const ctx: DecisionContext = {
  now,
  policyVersion: "pol_now",
  runClosed: false,
  findTool: (name) => catalog.find("support", name),
  budgetRefusal: () => null,
};

describe("the rules of an operator's decision", () => {
  it("approves a pending approval with its tool", () => {
    expect(planDecision(pending, "approve", ctx)).toMatchObject({
      kind: "approve",
      tool: { name: "issue_refund" },
    });
    expect(planDecision(pending, "reject", ctx)).toEqual({ kind: "reject" });
  });

  it("changes nothing when the same decision comes again, and refuses the opposite one", () => {
    expect(planDecision({ ...pending, state: "executed" }, "approve", ctx)).toEqual({
      kind: "unchanged",
      found: true,
    });
    expect(planDecision({ ...pending, state: "approved" }, "approve", ctx)).toEqual({
      kind: "unchanged",
      found: true,
    });
    expect(planDecision({ ...pending, state: "rejected" }, "approve", ctx)).toEqual({
      kind: "refuse",
      message: "This approval is already rejected.",
    });
    expect(planDecision(null, "approve", ctx)).toEqual({ kind: "unchanged", found: false });
  });

  it("expires an approval past its window or asked under another policy", () => {
    expect(planDecision({ ...pending, expires_at: new Date(now).toISOString() }, "approve", ctx)).toEqual({
      kind: "expire",
      why: "it expired",
    });
    expect(planDecision(pending, "reject", { ...ctx, policyVersion: "pol_new" })).toMatchObject({
      kind: "expire",
    });
  });

  it("refuses to execute in a closed run, for a tool that is gone, or beyond the budget", () => {
    expect(planDecision(pending, "approve", { ...ctx, runClosed: true })).toMatchObject({ kind: "refuse" });
    expect(planDecision(pending, "approve", { ...ctx, findTool: () => undefined })).toMatchObject({
      kind: "refuse",
    });
    expect(
      planDecision(pending, "approve", { ...ctx, budgetRefusal: () => "no room (max_destructive)" }),
    ).toEqual({
      kind: "refuse",
      message: "no room (max_destructive)",
    });
    expect(planDecision(pending, "reject", { ...ctx, runClosed: true })).toEqual({ kind: "reject" });
  });
});
