import { afterEach, describe, expect, it } from "vitest";
import type { ToolSpec } from "../../../src/catalog/define-tool";
import {
  asOperator,
  callTool,
  decide,
  openRun,
  refund,
  refundsOfRun,
  type TestRun,
  traceOf,
} from "../helpers";
import { reviseTenants } from "../tenant-changes";
import { restoreCatalog, reviseCatalog } from "./catalog";

/**
 * Changing the catalog and the tenants' configuration without stopping the fleet, through the real
 * Worker: a change reaches only the runs and approvals of what it changed (docs/own-api.md, "Tool
 * versions"; docs/guarantees.md). The catalog and the table change as a deploy changes them, while
 * runs and approvals are open.
 */

let restoreTenants: (() => void) | null = null;

afterEach(() => {
  restoreCatalog();
  restoreTenants?.();
  restoreTenants = null;
});

/** The tools served now, with one of them changed by `change`. */
const changing =
  (name: string, change: (tool: ToolSpec) => Partial<ToolSpec>) => (tools: readonly ToolSpec[]) =>
    tools.map((tool) => (tool.name === name ? { ...tool, ...change(tool) } : tool));

async function askRefund(run: TestRun, order: string, amount: number): Promise<string> {
  const asked = await callTool(run, "issue_refund", refund(order, amount));
  expect(asked.body.error?.code, JSON.stringify(asked.body.error)).toBe("approval_required");
  return asked.body.approval?.id ?? "";
}

async function approvalOf(id: string, tenant: "acme" | "globex" = "acme") {
  const { body } = await asOperator(`/v1/approvals/${id}`, {}, tenant);
  return (body.data as { approval: { state: string; decision_reason: string | null } }).approval;
}

describe("a change to the catalog or a tenant's configuration while runs are open", () => {
  it("leaves a run and its approval going through another tenant's new namespace and another tool's change; its own tool's change refuses its next call once and invalidates its approval, saying why", async () => {
    const a = await openRun("acme", { namespace: "support", limits: { max_destructive: 3 } });
    const b = await openRun("globex");
    expect((await callTool(a, "lookup_order", { order_id: "A1001" })).status).toBe(200);
    const first = await askRefund(a, "A1001", 150);
    const second = await askRefund(a, "A1002", 160);

    // Tenant B gets a namespace it did not have, and a tool a's run was shown but never called changes.
    restoreTenants = reviseTenants((tenants) => {
      const globex = tenants.globex as { namespaces: string[] };
      globex.namespaces = [...globex.namespaces, "helpdesk"];
    });
    reviseCatalog(
      changing("draft_customer_email", (tool) => ({
        description: { ...tool.description, does: `${tool.description.does} Drafts are kept for a week.` },
      })),
    );
    await openRun("globex", { namespace: "helpdesk" });
    expect((await callTool(b, "lookup_order", { order_id: "B2002" })).status).toBe(200);

    // a's run goes on, and its approval, once approved, executes exactly once.
    expect((await callTool(a, "lookup_order", { order_id: "A1002" })).status).toBe(200);
    const approved = await decide(first, "approve");
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    expect((await approvalOf(first)).state).toBe("executed");
    const replayed = await callTool(a, "issue_refund", refund("A1001", 150));
    expect(replayed.body).toMatchObject({ outcome: "success", replayed: true });
    expect(await refundsOfRun("A1001", a)).toHaveLength(1);
    expect((await approvalOf(second)).state).toBe("pending");

    // Then the refund tool's own contract changes: a's next refund call is told, once.
    reviseCatalog(
      changing("issue_refund", (tool) => ({
        description: {
          ...tool.description,
          avoid_when: `${tool.description.avoid_when} Never refund shipping.`,
        },
      })),
    );
    const changed = await callTool(a, "issue_refund", refund("A1002", 160));
    expect(changed.status).toBe(409);
    expect(changed.body.error).toMatchObject({
      code: "tool_changed",
      recommended_next_action: "list_tools",
      side_effect_confirmed: false,
      details: { tool: "support.issue_refund", changed: ["description"] },
    });
    // Its pending approval was asked under the old contract: invalidated, the reason shown to the operator…
    const reason = "the tool issue_refund changed since it was requested (its description)";
    expect(await approvalOf(second)).toMatchObject({ state: "expired", decision_reason: reason });
    const late = await decide(second, "approve");
    expect(late.status).toBe(409);
    expect(late.body.error?.message).toContain(reason);
    // …and to the agent, whose call of it now knows the new contract.
    const told = await callTool(a, "issue_refund", refund("A1002", 160));
    expect(told.body.error?.code).toBe("approval_expired");
    expect(told.body.error?.message).toContain(reason);
    expect(await refundsOfRun("A1002", a)).toHaveLength(0);
    // The run's other tools never stopped.
    expect((await callTool(a, "lookup_order", { order_id: "A1001" })).status).toBe(200);
    // Its trace holds the calls the run made (the refusal made none) and the one the operator executed.
    const refunds = (await traceOf(a)).filter((entry) => entry.tool === "issue_refund");
    expect(refunds.map((entry) => String(entry.actor).split(":")[0])).toEqual([
      "agent",
      "agent",
      "operator",
      "agent",
      "agent",
    ]);
  });

  it("says, when a changed tool's call resends a key that acted, what the key made: never that nothing was done", async () => {
    const run = await openRun("acme");
    const ticket = { customer_id: "C101", priority: "normal", summary: "Asked for the invoice again." };
    const made = await callTool(run, "create_internal_ticket", ticket);
    expect(made.status, JSON.stringify(made.body.error)).toBe(200);
    const ticketId = (made.body.data as { ticket_id: string }).ticket_id;
    reviseCatalog(
      changing("create_internal_ticket", (tool) => ({
        description: { ...tool.description, does: `${tool.description.does} Tickets are triaged daily.` },
      })),
    );
    const told = await callTool(run, "create_internal_ticket", ticket);
    expect(told.body.error).toMatchObject({
      code: "tool_changed",
      side_effect_confirmed: true,
      external_id: ticketId,
    });
    expect(told.body.idempotency_key).toBe(made.body.idempotency_key);
    expect(told.body.observed_state).toMatchObject({ stored_outcome: { outcome: "success" } });
    const again = await callTool(run, "create_internal_ticket", ticket);
    expect(again.body).toMatchObject({ outcome: "success", replayed: true });
  });

  it("scopes a tenant's configuration change to that tenant's approvals of the tools whose rules it changed", async () => {
    const a = await openRun("acme", { namespace: "support", limits: { max_destructive: 3 } });
    const g = await openRun("globex");
    const acmeRefund = await askRefund(a, "A1003", 170);
    const acmeEmail = await askRefund(a, "A1004", 180);
    const globexRefund = await askRefund(g, "B2003", 1500);

    restoreTenants = reviseTenants((tenants) => {
      // globex lowers its per-refund limit; acme changes keys none of its refund rules read.
      (tenants.globex as Record<string, unknown>).max_refund_cents = 15_000;
      const acme = tenants.acme as Record<string, unknown>;
      acme.approval_sla_s = 600;
      acme.repeat_threshold = 4;
    });
    const approved = await decide(acmeRefund, "approve");
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    expect(await refundsOfRun("A1003", a)).toHaveLength(1);
    const refused = await decide(globexRefund, "approve", undefined, "globex");
    expect(refused.status).toBe(409);
    expect(refused.body.error?.message).toContain(
      "this tenant's rules for issue_refund changed since it was requested (max_refund_cents)",
    );

    // acme's own rule for refunds: its pending one is invalidated too, naming the rule.
    restoreTenants();
    restoreTenants = reviseTenants((tenants) => {
      (tenants.acme as Record<string, unknown>).max_refund_cents = 40_000;
    });
    const invalidated = await decide(acmeEmail, "approve");
    expect(invalidated.status).toBe(409);
    expect(invalidated.body.error?.message).toContain(
      "this tenant's rules for issue_refund changed since it was requested (max_refund_cents)",
    );
    expect(await refundsOfRun("A1004", a)).toHaveLength(0);
  });
});
