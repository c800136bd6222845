import { describe, expect, it } from "vitest";
import { formatMoney } from "../../src/core/money";
import { catalog } from "../../src/tools";
import type { ApprovalDuplicate } from "../../src/wire/approval";
import { signedInOperator } from "./console-client";
import { asOperator, callTool, decide, openRun, refund, refundsOf } from "./helpers";

interface OrderView {
  currency: string;
  total_cents: number;
  refundable_cents: number;
  refunds: Array<{ amount_cents: number }>;
}

async function askRefund(order_id: string, amount_cents: number) {
  const run = await openRun("acme");
  const asked = await callTool(run, "issue_refund", refund(order_id, amount_cents));
  expect(asked.body.error?.code, JSON.stringify(asked.body)).toBe("approval_required");
  return { run, approvalId: asked.body.approval?.id ?? "" };
}

async function duplicatesOf(approvalId: string): Promise<ApprovalDuplicate[]> {
  const detail = await asOperator(`/v1/approvals/${approvalId}`);
  expect(detail.status).toBe(200);
  return (detail.body.data as { duplicates: ApprovalDuplicate[] }).duplicates;
}

// The decision context issue_refund declares in catalog/support.yaml.
const refundDecisionContext = (() => {
  const context = catalog.find("support", "issue_refund")?.decision_context;
  if (!context) throw new Error("issue_refund declares no decision context");
  return context;
})();

describe("what an operator sees before deciding", () => {
  it("formats amounts with their currency", () => {
    expect(formatMoney(1999, "USD")).toBe("$19.99");
    expect(formatMoney(500, "EUR")).toBe("€5.00");
    // Currencies without minor units are not divided by 100.
    expect(formatMoney(500, "JPY")).toBe("¥500");
    expect(formatMoney(42, "XX1")).toBe("42 XX1 minor units");
  });

  it("turns an order into the facts of a refund decision, flagging an amount above what is left", () => {
    const order = {
      status: "delivered",
      currency: "USD",
      total_cents: 10_000,
      refundable_cents: 2_500,
      customer_id: "C101",
      refunds: [{ amount_cents: 5_000 }, { amount_cents: 2_500 }],
    };
    const facts = refundDecisionContext.facts({ order_id: "A1001", amount_cents: 3_000 }, order);
    expect(facts).toEqual([
      {
        label: "This refund",
        value: "$30.00",
        warning: "More than the $25.00 still refundable: the payments API will refuse it.",
      },
      { label: "Order total", value: "$100.00" },
      { label: "Refunds already issued", value: "2 · $75.00" },
      { label: "Still refundable", value: "$25.00" },
      { label: "Order status", value: "delivered" },
      { label: "Customer", value: "C101" },
    ]);
    // Nothing read (the order could not be found): only the request itself, without a guess.
    expect(refundDecisionContext.facts({ order_id: "A1001", amount_cents: 300 }, null)).toEqual([
      { label: "This refund", value: "$3.00" },
      { label: "Refunds already issued", value: "none" },
    ]);
  });

  it("shows the order's total, refunds issued and what is still refundable on the approval page", async () => {
    const { run, approvalId } = await askRefund("A1003", 250);
    const order = (await callTool(run, "lookup_order", { order_id: "A1003" })).body.data as OrderView;
    const operator = await signedInOperator();
    const page = await operator.get(`/console/approvals/${approvalId}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain("What you are deciding on");
    expect(page.html).toContain(formatMoney(250, order.currency));
    expect(page.html).toContain(formatMoney(order.total_cents, order.currency));
    expect(page.html).toContain(formatMoney(order.refundable_cents, order.currency));
    expect(page.html).toContain("Read just now with <code>lookup_order</code>");
    // The second leg of exactly-once, as the catalog's certification of the payments API found it.
    expect(page.html).toMatch(
      /<dd id="upstream-promise"><code>PAYMENTS_API<\/code> applies a key once: certified \d{4}-\d\d-\d\d; a write in doubt is resent under its key\.<\/dd>/,
    );
  });
});

describe("the same destructive call in two runs", () => {
  it("warns on the second approval, refuses to approve it unconfirmed, and executes it only when confirmed", async () => {
    const first = await askRefund("A1002", 500);
    const second = await askRefund("A1002", 500);
    // While both wait, each names the other.
    expect((await duplicatesOf(first.approvalId)).map((entry) => entry.approval_id)).toEqual([
      second.approvalId,
    ]);

    const firstApproved = await decide(first.approvalId, "approve", undefined);
    // The first one has a pending twin too: it needs the confirmation as well.
    expect(firstApproved.status).toBe(409);
    expect(firstApproved.body.error?.details).toMatchObject({ reason: "duplicate_unconfirmed" });
    const confirmedFirst = await asOperator(`/v1/approvals/${first.approvalId}/approve`, {
      method: "POST",
      body: JSON.stringify({ confirm_duplicate: true }),
    });
    expect(confirmedFirst.status, JSON.stringify(confirmedFirst.body)).toBe(200);

    const duplicates = await duplicatesOf(second.approvalId);
    expect(duplicates).toEqual([
      expect.objectContaining({
        approval_id: first.approvalId,
        run_id: first.run.id,
        state: "executed",
        decided_by_name: "Dana Reyes",
      }),
    ]);

    // The list says so too.
    const listed = await asOperator("/v1/approvals?state=pending");
    const row = (listed.body.data as { approvals: Array<{ id: string; duplicates: number }> }).approvals.find(
      (entry) => entry.id === second.approvalId,
    );
    expect(row?.duplicates).toBe(1);

    const refundsBefore = (await refundsOf("A1002")).length;
    const unconfirmed = await decide(second.approvalId, "approve", "looks fine");
    expect(unconfirmed.status).toBe(409);
    expect(unconfirmed.body.outcome).toBe("terminal_failure");
    expect(unconfirmed.body.error).toMatchObject({
      code: "conflict_error",
      recommended_next_action: "reconcile",
      details: {
        reason: "duplicate_unconfirmed",
        duplicates: [expect.objectContaining({ state: "executed" })],
      },
    });
    expect(unconfirmed.body.error?.message).toContain(first.approvalId);
    expect((await refundsOf("A1002")).length).toBe(refundsBefore);

    // The console shows the warning and asks for the confirmation before approving.
    const operator = await signedInOperator();
    const page = await operator.get(`/console/approvals/${second.approvalId}`);
    expect(page.html).toContain("Possible duplicate");
    expect(page.html).toContain(first.approvalId);
    expect(page.html).toContain('name="confirm_duplicate"');
    const withoutBox = await operator.post(`/console/approvals/${second.approvalId}/approve`, {
      csrf: operator.csrf,
    });
    expect(withoutBox.status).toBe(409);
    expect(withoutBox.html).toContain("would do it again");
    expect((await refundsOf("A1002")).length).toBe(refundsBefore);

    const confirmed = await operator.post(`/console/approvals/${second.approvalId}/approve`, {
      csrf: operator.csrf,
      confirm_duplicate: "yes",
    });
    expect(confirmed.status).toBe(303);
    expect((await refundsOf("A1002")).length).toBe(refundsBefore + 1);
  });

  it("does not count a rejected twin, another tool, other arguments or a non-destructive call", async () => {
    const rejected = await askRefund("A1005", 120);
    expect((await decide(rejected.approvalId, "reject", "customer withdrew")).status).toBe(200);
    const again = await askRefund("A1005", 120);
    expect(await duplicatesOf(again.approvalId)).toEqual([]);
    const otherAmount = await askRefund("A1005", 121);
    expect(await duplicatesOf(otherAmount.approvalId)).toEqual([]);
    // Rejecting never needs the confirmation.
    expect((await decide(otherAmount.approvalId, "reject", "no")).status).toBe(200);
  });

  it("refuses a malformed confirmation with a field problem", async () => {
    const { approvalId } = await askRefund("A1004", 130);
    const bad = await asOperator(`/v1/approvals/${approvalId}/approve`, {
      method: "POST",
      body: JSON.stringify({ confirm_duplicate: "yes" }),
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error?.code).toBe("validation_error");
    expect(JSON.stringify(bad.body.error)).toContain("confirm_duplicate");
  });
});
