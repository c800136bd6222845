import { describe, expect, it } from "vitest";
import { callTool, openRun } from "./helpers";

/**
 * umbrella refuses writes once a run has read untrusted text (`tainted_runs`): the refusal of a
 * resend of a ticket opened before the taint says the ticket exists, with its key. This file
 * has umbrella's buckets (5 calls a minute) to itself.
 */
describe("a tainted run's refusal of a write's resend", () => {
  it("carries the ticket opened before the run read untrusted text, with its key", async () => {
    const run = await openRun("umbrella");
    const ticket = { customer_id: "C401", priority: "low", summary: "Customer asked for a call back." };
    const opened = await callTool(run, "create_internal_ticket", ticket);
    expect(opened.body.outcome, JSON.stringify(opened.body.error)).toBe("success");
    const ticketId = (opened.body.data as { ticket_id: string }).ticket_id;
    // The customer's newest message carries planted instructions: the run is tainted by this read.
    const read = await callTool(
      run,
      "get_customer_profile",
      { customer_id: "C401" },
      { "x-sandbox-fault": "injection" },
    );
    expect(read.body.outcome, JSON.stringify(read.body.error)).toBe("success");

    const resent = await callTool(run, "create_internal_ticket", ticket);
    expect(resent.status).toBe(403);
    // Before: false, with no key, for a ticket the CRM holds.
    expect(resent.body.error).toMatchObject({
      code: "permission_error",
      side_effect_confirmed: true,
      external_id: ticketId,
      recommended_next_action: "escalate_to_human",
    });
    expect(resent.body.idempotency_key).toBe(opened.body.idempotency_key);
  });
});
