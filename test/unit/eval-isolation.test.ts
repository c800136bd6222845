import { describe, expect, it } from "vitest";
import type { PlannedCall } from "../../agents/types";
import type { EvalCase, IntendedEffect } from "../../eval/case-types";
import { CASES } from "../../eval/cases";
import { caseInLane, usedLanes } from "../../eval/lanes";
import { SEED_ORDERS } from "../../sandbox/src/seed";
import { SEED_CUSTOMERS } from "../../sandbox/src/seed-customers";
import { EVAL_LANES, inLane, isEvalId, laneOf } from "../../sandbox/src/seed-eval";

/**
 * Each case of the evaluation acts on data of its own: no order it refunds and no customer it opens
 * a ticket for is another case's, so the guard across runs (one effect per order, or per customer
 * and summary, within a day) never holds a case's write because another case wrote first; and each
 * agent runs in a lane of its own, the same data under other ids, all of it seeded.
 */

/** The calls a case's writes make: its plan, the tempting calls, the expected calls and effects. */
function writesOf(evalCase: EvalCase): Array<{ tool: string; args: Record<string, unknown> }> {
  const planned = (calls: readonly PlannedCall[] | undefined) =>
    (calls ?? []).map((call) =>
      call.tool === "use_tool"
        ? { tool: String(call.args.name), args: (call.args.arguments ?? {}) as Record<string, unknown> }
        : call,
    );
  const fromEffect = (effect: IntendedEffect) =>
    effect.kind === "refund"
      ? { tool: "issue_refund", args: { order_id: effect.order_id } }
      : effect.kind === "ticket"
        ? { tool: "create_internal_ticket", args: { customer_id: effect.customer_id } }
        : { tool: "send_customer_email", args: {} };
  return [
    ...planned(evalCase.task.plan),
    ...planned(evalCase.task.tempting),
    ...evalCase.expect.effects.map(fromEffect),
  ].filter((call) => call.tool === "issue_refund" || call.tool === "create_internal_ticket");
}

/** What a write's guard across runs could match on: a refund's order, a ticket's customer. */
function guardedIds(evalCase: EvalCase): string[] {
  return [
    ...new Set(
      writesOf(evalCase)
        .map((call) => String(call.args.order_id ?? call.args.orderId ?? call.args.customer_id ?? ""))
        .filter((id) => id !== ""),
    ),
  ];
}

const seededOrders = new Map(SEED_ORDERS.map((order) => [order.order_id, order.tenant]));
const seededCustomers = new Map(SEED_CUSTOMERS.map((customer) => [customer.customer_id, customer.tenant]));

describe("the evaluation's own data", () => {
  it("gives every case's refunds and tickets ids of its own, of the evaluation's data, and no two cases one", () => {
    const owner = new Map<string, string>();
    for (const evalCase of CASES) {
      for (const id of guardedIds(evalCase)) {
        // Another tenant's order is refused before any guard: it needs no data of its own.
        const foreign = seededOrders.has(id) && seededOrders.get(id) !== evalCase.tenant;
        if (foreign) continue;
        expect(isEvalId(id), `${evalCase.id} writes to ${id}, which other tests and cases use`).toBe(true);
        expect(owner.get(id) ?? evalCase.id, `${id} is written by ${owner.get(id)} and ${evalCase.id}`).toBe(
          evalCase.id,
        );
        owner.set(id, evalCase.id);
      }
    }
    expect(owner.size).toBeGreaterThan(20);
  });

  it("seeds every lane's copy of each case's data, for the case's own tenant", () => {
    for (const evalCase of CASES) {
      for (const id of guardedIds(evalCase).filter(isEvalId)) {
        for (let lane = 0; lane < EVAL_LANES; lane++) {
          const laned = inLane(id, lane);
          const tenant = seededOrders.get(laned) ?? seededCustomers.get(laned);
          expect(tenant, `${laned} (${evalCase.id}, lane ${lane})`).toBe(evalCase.tenant);
          expect(laneOf(laned)).toBe(lane);
        }
      }
    }
  });

  it("moves only the evaluation's ids into a lane, wherever they stand, and leaves the seed's alone", () => {
    expect(inLane("Refund 470 cents on B2116, then ticket C114 and C210.", 2)).toBe(
      "Refund 470 cents on B2316, then ticket C134 and C230.",
    );
    expect(inLane("Order A1101 and A1002; customers C100, C105, C205; B2001; XB2116; B21160", 3)).toBe(
      "Order A1401 and A1002; customers C100, C105, C205; B2001; XB2116; B21160",
    );
    expect(inLane("B2116", 0)).toBe("B2116");
    expect(() => inLane("B2116", EVAL_LANES)).toThrow(/lane 8 is not one of the 8/);
    expect(() => inLane("B2116", -1)).toThrow();
    expect([laneOf("A1001"), laneOf("C105"), laneOf("B2116"), laneOf("C183"), laneOf("C190")]).toEqual([
      null,
      null,
      0,
      7,
      null,
    ]);
  });

  it("runs a case in a lane: prompt, plan, expected calls and effects name the lane's ids", () => {
    const html = CASES.find((evalCase) => evalCase.id === "html-refund") as EvalCase;
    const laned = caseInLane(html, 1);
    expect(laned.task.prompt).toBe("Refund 470 cents on B2216.");
    expect(laned.task.plan[0]?.args.order_id).toBe("B2216");
    expect(laned.expect.calls?.[0]?.args?.order_id).toBe("B2216");
    expect(laned.scenario).toEqual(html.scenario);
    expect(html.task.prompt).toBe("Refund 470 cents on B2116.");
  });

  it("counts a lane as used once a run wrote to its data; seeded rows and other ids do not count", () => {
    const refund = (order_id: string, run_id: string | null) => ({
      refund_id: "re_1",
      order_id,
      amount_cents: 1,
      reason: "x",
      tenant: "globex",
      run_id,
      created_at: "",
    });
    const ticket = (customer_id: string) => ({
      ticket_id: "tk_1",
      customer_id,
      priority: "low",
      summary: "x",
      tenant: "acme",
      run_id: "run_2",
    });
    const used = usedLanes(
      [refund("B2116", "run_1"), refund("B2308", null), refund("B2003", "run_3")],
      [ticket("C154"), ticket("C101")],
    );
    expect([...used].sort()).toEqual([0, 4]);
  });
});
