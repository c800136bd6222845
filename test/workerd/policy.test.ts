import { describe, expect, it } from "vitest";
import { callTool, openRun, sandboxRequests } from "./helpers";

describe("business policy, checked after the schema", () => {
  it("refuses a refund above the tenant's per-refund limit, saying what is allowed", async () => {
    const run = await openRun("globex");
    const { status, body } = await callTool(run, "issue_refund", {
      order_id: "B2001",
      amount_cents: 20_001,
      reason: "user_cancel",
    });
    expect(status).toBe(403);
    expect(body.error?.code).toBe("permission_error");
    expect(body.error?.side_effect_confirmed).toBe(false);
    expect(body.error?.problems).toEqual([
      {
        field: "amount_cents",
        reason: "20001 is above this tenant's per-refund limit",
        hint: expect.stringContaining("At most 20000 cents"),
      },
    ]);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("refuses an order that belongs to another tenant before it reaches the upstream", async () => {
    const run = await openRun("acme");
    const { body } = await callTool(run, "lookup_order", { order_id: "B2001" });
    expect(body.error?.code).toBe("permission_error");
    expect(body.error?.problems?.[0]).toMatchObject({
      field: "order_id",
      reason: "B2001 does not belong to this tenant",
    });
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("refuses another tenant's customer", async () => {
    const run = await openRun("globex");
    const { body } = await callTool(run, "get_customer_profile", { customer_id: "C100" });
    expect(body.error?.code).toBe("permission_error");
  });

  it("reports every refused field at once", async () => {
    const run = await openRun("globex");
    const { body } = await callTool(run, "issue_refund", {
      order_id: "A1001",
      amount_cents: 999_999,
      reason: "price_error",
    });
    expect(body.error?.problems?.map((problem) => problem.field)).toEqual(["order_id", "amount_cents"]);
  });
});
