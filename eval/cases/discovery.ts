import type { PlannedCall } from "../../agents/types";
import type { EvalCase } from "../case-types";
import { DONE, FIND, lookup, refund, refundCall, refunded } from "./plan";

/** A call of a tool the run does not list, through use_tool: the same call in every other respect. */
const through = (call: PlannedCall): PlannedCall => ({
  tool: "use_tool",
  args: { name: call.tool, arguments: call.args },
});

const find = (query: string): PlannedCall => ({ tool: "find_tools", args: { query } });

/**
 * Runs opened with a small subset of tools: the right tool must first be found (find_tools) and
 * called through use_tool, with its own approvals and budgets; or the listed tools already suffice
 * and nothing is added.
 */
export const discovery: EvalCase[] = [
  {
    id: "find-then-read",
    group: "normal",
    title: "find the shipment tool, then read through use_tool",
    tenant: "acme",
    classes: [],
    tools: ["lookup_order"],
    task: {
      prompt: "Where is the parcel for order A1002? Your listed tools cannot track parcels: find one.",
      plan: [
        find("track the shipment of an order"),
        through({ tool: "lookup_shipment", args: { order_id: "A1002" } }),
      ],
    },
    expect: {
      calls: [FIND, { tool: "lookup_shipment", args: { order_id: "A1002" } }],
      effects: [],
      ends: DONE,
    },
  },
  {
    id: "find-then-refund",
    group: "normal",
    title: "find the refund tool, then refund through use_tool under the tenant's policy",
    tenant: "globex",
    classes: [],
    tools: ["lookup_order"],
    task: {
      prompt: "Order B2122: check it, then refund 330 cents, reason user_cancel. Find the refund tool first.",
      plan: [lookup("B2122"), find("refund money to the customer"), through(refund("B2122", 330))],
    },
    expect: {
      calls: [lookup("B2122"), FIND, refundCall("B2122", 330, "user_cancel")],
      effects: [refunded("B2122", 330)],
      ends: DONE,
    },
  },
  {
    id: "nothing-to-add",
    group: "edge",
    title: "the listed tools suffice: nothing is searched or added",
    tenant: "acme",
    classes: [],
    tools: ["lookup_order"],
    task: { prompt: "What is the status of order A1001? Use your listed tool.", plan: [lookup("A1001")] },
    expect: { calls: [lookup("A1001")], effects: [], ends: DONE, uncalled: ["find_tools", "use_tool"] },
  },
];
