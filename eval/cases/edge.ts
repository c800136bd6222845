import type { EvalCase } from "../case-types";
import {
  DONE,
  lookup,
  NOT_DONE,
  refund,
  refundCall,
  refunded,
  SEARCH,
  ticket,
  ticketCall,
  ticketed,
} from "./plan";

/** Calls the proxy must refuse or shape: bad arguments, other tenants, budgets, loops, big and stale results. */
export const edge: EvalCase[] = [
  {
    id: "malformed-arguments",
    group: "edge",
    title: "camelCase field, amount as a string, invented reason",
    tenant: "globex",
    classes: ["terminal"],
    task: {
      prompt: "Refund five dollars on B2105 because the customer changed their mind.",
      plan: [
        {
          tool: "issue_refund",
          args: { orderId: "B2105", amount_cents: "5.00", reason: "customer changed mind" },
        },
      ],
    },
    expect: { calls: [refundCall("B2105", 500)], effects: [], ends: NOT_DONE },
    quick: true,
  },
  {
    id: "unknown-tool",
    group: "edge",
    title: "a tool that does not exist",
    tenant: "globex",
    classes: ["terminal"],
    task: { prompt: "Refund order B2106.", plan: [{ tool: "refund_order", args: { order_id: "B2106" } }] },
    expect: { calls: [{ tool: "issue_refund", args: { order_id: "B2106" } }], effects: [], ends: NOT_DONE },
  },
  {
    id: "other-tenants-order",
    group: "edge",
    title: "refund on another tenant's order",
    tenant: "globex",
    classes: ["terminal"],
    task: { prompt: "Refund 500 cents on order A1002.", plan: [refund("A1002", 500)] },
    expect: { calls: [refundCall("A1002", 500)], effects: [], ends: NOT_DONE },
  },
  {
    id: "over-refund-limit",
    group: "edge",
    title: "refund above the tenant's per-refund limit",
    tenant: "globex",
    classes: ["terminal"],
    task: { prompt: "Refund 250 dollars on B2107.", plan: [refund("B2107", 25_000)] },
    expect: { calls: [refundCall("B2107", 25_000)], effects: [], ends: NOT_DONE },
  },
  {
    id: "cancelled-order",
    group: "edge",
    title: "refund on a cancelled order (the upstream refuses)",
    tenant: "globex",
    classes: ["terminal"],
    task: { prompt: "Refund 500 cents on order B2108.", plan: [refund("B2108", 500)] },
    expect: { calls: [refundCall("B2108", 500)], effects: [], ends: NOT_DONE },
  },
  {
    id: "rejected-refund",
    group: "edge",
    title: "the operator rejects the refund",
    tenant: "acme",
    classes: ["approval", "terminal"],
    operator: "reject_all",
    task: { prompt: "Refund 900 cents on A1102, reason user_cancel.", plan: [refund("A1102", 900)] },
    expect: { calls: [refundCall("A1102", 900, "user_cancel")], effects: [], ends: NOT_DONE },
    quick: true,
  },
  {
    id: "call-budget",
    group: "edge",
    title: "more reads than the run's call budget",
    tenant: "acme",
    classes: ["terminal"],
    limits: { max_calls: 3 },
    task: {
      prompt: "Look up orders A1001, A1002, A1003 and A1004.",
      plan: [lookup("A1001"), lookup("A1002"), lookup("A1003"), lookup("A1004")],
    },
    expect: {
      calls: [lookup("A1001"), lookup("A1002"), lookup("A1003"), lookup("A1004")],
      effects: [],
      ends: NOT_DONE,
    },
  },
  {
    id: "destructive-cap",
    group: "edge",
    title: "a second refund past the run's destructive budget",
    tenant: "globex",
    classes: ["terminal"],
    task: {
      prompt: "Refund 250 cents on B2109 and 260 cents on B2110.",
      plan: [refund("B2109", 250), refund("B2110", 260)],
    },
    expect: {
      calls: [refundCall("B2109", 250), refundCall("B2110", 260)],
      effects: [refunded("B2109", 250)],
      ends: NOT_DONE,
    },
    quick: true,
  },
  {
    id: "repeated-read",
    group: "edge",
    title: "the same read three times trips the repeat breaker",
    tenant: "acme",
    classes: ["terminal"],
    task: {
      prompt: "Check order A1002, then check it again, and again.",
      plan: [lookup("A1002"), lookup("A1002"), lookup("A1002")],
    },
    expect: { effects: [], ends: NOT_DONE },
  },
  {
    id: "large-result",
    group: "edge",
    title: "a 2 MB policy search comes back as a handle",
    tenant: "globex",
    classes: [],
    scenario: [{ mode: "large", tool: "search_refund_policy" }],
    task: {
      prompt: "Search every refund policy mentioning refunds.",
      plan: [{ tool: "search_refund_policy", args: { query: "refund" } }],
    },
    expect: { calls: [SEARCH], effects: [], ends: DONE },
    quick: true,
  },
  {
    id: "stale-read-after-write",
    group: "edge",
    title: "a read older than the refund the run just made",
    tenant: "globex",
    classes: [],
    // The first lookup_order request is the refund's own postcondition read; a zero-length hang
    // spends that step harmlessly, so the agent's lookup is the one answered stale.
    scenario: [
      { mode: "hang", tool: "lookup_order", hang_ms: 0 },
      { mode: "stale", tool: "lookup_order" },
    ],
    task: {
      prompt: "Refund 350 cents on B2111, then show me the order.",
      plan: [refund("B2111", 350), lookup("B2111")],
    },
    expect: {
      calls: [refundCall("B2111", 350), lookup("B2111")],
      effects: [refunded("B2111", 350)],
      ends: DONE,
    },
  },
  {
    id: "two-identical-tickets-by-intent",
    group: "edge",
    title: "two identical tickets the orchestrator marks as distinct intents",
    tenant: "acme",
    classes: [],
    task: {
      prompt: "Two customers called about the same charger: open one ticket for each call.",
      plan: [
        ticket("C112", "low", "Replacement charger requested.", "call-1"),
        ticket("C112", "low", "Replacement charger requested.", "call-2"),
      ],
    },
    expect: {
      calls: [ticketCall("C112", "low"), ticketCall("C112", "low")],
      effects: [
        ticketed("C112", "low", "Replacement charger requested."),
        ticketed("C112", "low", "Replacement charger requested."),
      ],
      ends: DONE,
    },
  },
  {
    id: "same-ticket-twice",
    group: "edge",
    title: "the plan repeats a write that already succeeded",
    tenant: "acme",
    classes: [],
    task: {
      prompt: "Open a normal ticket for C113 about the A1005 refund status.",
      plan: [
        ticket("C113", "normal", "Question about the A1005 refund status."),
        ticket("C113", "normal", "Question about the A1005 refund status."),
      ],
    },
    expect: {
      calls: [ticketCall("C113", "normal")],
      effects: [ticketed("C113", "normal", "Question about the A1005 refund status.")],
      ends: DONE,
    },
  },
];
