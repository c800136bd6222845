import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../src/wire/approval";
import { type ConsoleClient, signedInOperator } from "./console-client";
import {
  ACME_OPERATORS,
  asOperator,
  callTool,
  openRun,
  refund,
  refundsOfRun,
  sandboxRequests,
  type TestRun,
  traceOf,
} from "./helpers";

/**
 * "Edit and approve" in the console (acme in wrangler.toml): issue_refund needs support_lead,
 * finance_lead above 20000 cents, two different operators above 30000, and acme refuses refunds
 * above 50000. Dana Reyes holds finance_lead, Riley Chen only support_lead.
 */

async function pendingRefund(order: string, amount: number): Promise<{ run: TestRun; id: string }> {
  const run = await openRun("acme");
  const asked = await callTool(run, "issue_refund", refund(order, amount));
  expect(asked.body.error?.code, JSON.stringify(asked.body.error)).toBe("approval_required");
  return { run, id: asked.body.approval?.id ?? "" };
}

async function approvalOf(id: string): Promise<ApprovalRecord> {
  const { body } = await asOperator(`/v1/approvals/${id}`);
  return (body.data as { approval: ApprovalRecord }).approval;
}

/** The "Edit and approve" form as a browser posts it: every argument input, the edit marker and the token. */
function postEdit(client: ConsoleClient, id: string, args: Record<string, string>, extra = {}) {
  const form: Record<string, string> = { csrf: client.csrf, edit: "yes", confirm_duplicate: "yes", ...extra };
  for (const [name, value] of Object.entries(args)) form[`args.${name}`] = value;
  return client.post(`/console/approvals/${id}/approve`, form);
}

/** The opening tag of the element with this id. */
function tagOf(html: string, id: string): string {
  return new RegExp(`<(input|select|textarea)[^>]*id="${id}"[^>]*>`).exec(html)?.[0] ?? "";
}

/** What the page says beside an argument's input after a refused edit. */
function fieldErrorOf(html: string, field: string): string {
  const match = new RegExp(`<p class="field-error" id="edit-arg-${field}-error">([\\s\\S]*?)</p>`).exec(html);
  return match?.[1] ?? "";
}

async function refundRequests(run: TestRun) {
  return (await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds");
}

describe("edit and approve in the console", () => {
  it("offers one input per argument, typed from the tool's schema and filled with the call as asked", async () => {
    const { id } = await pendingRefund("A1001", 900);
    const dana = await signedInOperator();
    const { status, html } = await dana.get(`/console/approvals/${id}`);
    expect(status).toBe(200);
    expect(html).toContain("<h3>Edit and approve</h3>");
    const amount = tagOf(html, "edit-arg-amount_cents");
    expect(amount).toContain('type="number"');
    expect(amount).toContain('name="args.amount_cents"');
    expect(amount).toContain('value="900"');
    expect(amount).toContain('step="1"');
    const order = tagOf(html, "edit-arg-order_id");
    expect(order).toContain('type="text"');
    expect(order).toContain('value="A1001"');
    expect(tagOf(html, "edit-arg-reason")).toMatch(/^<select/);
    expect(html).toMatch(/<option value="user_cancel" selected="">user_cancel<\/option>/);
    expect(html).toContain('<option value="out_of_stock">out_of_stock</option>');
    // The plain forms are still there.
    expect(html).toContain("Approve and execute");
    expect(html).toContain(`action="/console/approvals/${id}/reject"`);
  });

  it("executes the edited call once, and shows who changed what on the approval and in the run's trace", async () => {
    const { run, id } = await pendingRefund("A1003", 900);
    const dana = await signedInOperator();
    const approved = await postEdit(dana, id, {
      order_id: "A1003",
      amount_cents: "600",
      reason: "user_cancel",
    });
    expect(approved.status, approved.html).toBe(303);
    expect(approved.headers.get("location")).toBe(`/console/approvals/${id}?decided=approve`);

    expect(await approvalOf(id)).toMatchObject({
      state: "executed",
      args: refund("A1003", 600),
      edit: { asked_args: refund("A1003", 900), fields: ["amount_cents"], by_name: "Dana Reyes" },
    });
    expect((await refundsOfRun("A1003", run)).map((made) => made.amount_cents)).toEqual([600]);
    expect(await refundRequests(run)).toHaveLength(1);

    const page = await dana.get(approved.headers.get("location") ?? "");
    expect(page.html).toContain("The call executed once: <strong>success</strong>");
    expect(page.html).toContain("<dt>Edited before approval</dt>");
    expect(page.html).toMatch(
      /<strong>Dana Reyes<\/strong> changed <code>amount_cents<\/code> \$9\.00 → \$6\.00 at <time datetime="[^"]+">/,
    );
    expect(page.html).not.toContain("<h3>Edit and approve</h3>");

    const trace = await dana.get(`/console/runs/${run.id}`);
    expect(trace.html).toContain("edited before approval");
    expect(trace.html).toMatch(
      /<strong>Dana Reyes<\/strong> changed <code>amount_cents<\/code> \$9\.00 → \$6\.00\./,
    );
    const executed = (await traceOf(run)).find((entry) => String(entry.actor).startsWith("operator:"));
    expect(executed).toMatchObject({ args: refund("A1003", 600), edit: { fields: ["amount_cents"] } });
  });

  it("refuses a bad edit with the problem beside its input, keeps what was typed, and executes nothing", async () => {
    const { run, id } = await pendingRefund("A1002", 900);
    const dana = await signedInOperator();
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ order_id: "A1002", amount_cents: "six hundred", reason: "user_cancel" }, 422, "amount_cents"],
      [{ order_id: "A1002", amount_cents: "", reason: "user_cancel" }, 422, "amount_cents"],
      [{ order_id: "A1002", amount_cents: "600", reason: "because" }, 422, "reason"],
      [{ order_id: "A1002", amount_cents: "60000", reason: "user_cancel" }, 403, "amount_cents"],
      [{ order_id: "Z9999", amount_cents: "600", reason: "user_cancel" }, 403, "order_id"],
    ];
    for (const [args, status, field] of cases) {
      const refused = await postEdit(dana, id, args, { reason: "The customer asked for less." });
      expect(refused.status, JSON.stringify(args)).toBe(status);
      expect(refused.html).toContain("The edited arguments cannot be approved");
      expect(fieldErrorOf(refused.html, field), JSON.stringify(args)).not.toBe("");
      expect(tagOf(refused.html, `edit-arg-${field}`)).toContain('aria-invalid="true"');
      // The form shows the operator's values and note again, not the call as asked.
      expect(refused.html).toMatch(
        /<textarea id="edit-reason"[^>]*>The customer asked for less\.<\/textarea>/,
      );
      if (field !== "reason")
        expect(tagOf(refused.html, `edit-arg-${field}`)).toContain(`value="${args[field]}"`);
      // The other inputs carry no error.
      for (const other of ["order_id", "amount_cents", "reason"].filter((name) => name !== field)) {
        expect(fieldErrorOf(refused.html, other)).toBe("");
      }
    }
    const above = await postEdit(dana, id, {
      order_id: "A1002",
      amount_cents: "60000",
      reason: "user_cancel",
    });
    expect(fieldErrorOf(above.html, "amount_cents")).toContain(
      "60000 is above this tenant&#39;s per-refund limit. At most 50000 cents per refund",
    );

    expect(await approvalOf(id)).toMatchObject({ state: "pending", args: refund("A1002", 900), edit: null });
    expect(await refundsOfRun("A1002", run)).toHaveLength(0);
    expect(await refundRequests(run)).toHaveLength(0);
  });

  it("refuses with 403 an edit that needs a role the operator lacks, and records one that needs two as 1 of 2", async () => {
    const { run, id } = await pendingRefund("A1004", 15_000);
    const riley = await signedInOperator("acme", ACME_OPERATORS.riley);
    const raised = await postEdit(riley, id, {
      order_id: "A1004",
      amount_cents: "25000",
      reason: "user_cancel",
    });
    expect(raised.status).toBe(403);
    expect(raised.html).toContain("approve this edit");
    expect(tagOf(raised.html, "edit-arg-amount_cents")).toContain('value="25000"');
    expect(await approvalOf(id)).toMatchObject({ state: "pending", args: refund("A1004", 15_000) });

    const dana = await signedInOperator();
    const first = await postEdit(dana, id, {
      order_id: "A1004",
      amount_cents: "35000",
      reason: "user_cancel",
    });
    expect(first.status, first.html).toBe(303);
    const page = await dana.get(`/console/approvals/${id}`);
    expect(page.html).toContain("You approved this (1 of 2)");
    expect(page.html).toMatch(/changed <code>amount_cents<\/code> \$150\.00 → \$350\.00 at/);
    // Dana already approved: no second edit form for her.
    expect(page.html).not.toContain("<h3>Edit and approve</h3>");
    expect(await refundsOfRun("A1004", run)).toHaveLength(0);
  });

  it("refuses an edit posted without the session's CSRF token (403) and executes nothing", async () => {
    const { run, id } = await pendingRefund("A1001", 700);
    const dana = await signedInOperator();
    const other = await signedInOperator();
    const args = { order_id: "A1001", amount_cents: "500", reason: "user_cancel" };
    for (const csrf of ["", "x".repeat(43), other.csrf]) {
      const forged = await postEdit(dana, id, args, { csrf });
      expect(forged.status, csrf).toBe(403);
      expect(forged.html).toContain("security token is missing or does not match");
    }
    expect(await approvalOf(id)).toMatchObject({ state: "pending", args: refund("A1001", 700), edit: null });
    expect(await refundRequests(run)).toHaveLength(0);
  });
});
