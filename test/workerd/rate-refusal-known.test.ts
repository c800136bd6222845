import { describe, expect, it } from "vitest";
import { callTool, openRun } from "./helpers";

/**
 * A call the run's rate refuses sends nothing, but it may be the resend of a key whose earlier send
 * acted: the refusal says what is known of that effect, never "not done" for one that happened,
 * however the call named its tool. umbrella (wrangler.toml) allows a run 3 calls a minute; this file
 * has the tenant's buckets to itself.
 */
describe("a rate refusal of a write's resend", () => {
  it("carries the effect of a ticket opened through use_tool, with its key", async () => {
    // A run opened with one tool reaches umbrella's others through use_tool.
    const run = await openRun("umbrella", { namespace: "support", tools: ["lookup_order"] });
    const ticket = {
      name: "create_internal_ticket",
      arguments: { customer_id: "C401", priority: "low", summary: "Customer asked about a late parcel." },
    };
    const opened = await callTool(run, "use_tool", ticket);
    expect(opened.body.outcome, JSON.stringify(opened.body.error)).toBe("success");
    const ticketId = (opened.body.data as { ticket_id: string }).ticket_id;
    // Two more calls spend the run's three.
    for (const order of ["U0001", "U0002"]) await callTool(run, "lookup_order", { order_id: order });

    const refused = await callTool(run, "use_tool", ticket);
    expect(refused.status).toBe(429);
    expect(refused.body.error?.code).toBe("rate_limited");
    // Before: false, with no key, for a ticket the CRM holds.
    expect(refused.body.error).toMatchObject({ side_effect_confirmed: true, external_id: ticketId });
    expect(refused.body.idempotency_key).toBe(opened.body.idempotency_key);
    expect(refused.body.tool).toBe("create_internal_ticket");
  });
});
