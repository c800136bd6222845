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
    task: {
      prompt: "Refund five dollars on B2003 because the customer changed their mind.",
      plan: [
        {
          tool: "issue_refund",
          args: { orderId: "B2003", amount_cents: "5.00", reason: "customer changed mind" },
        },
      ],
    },
    expect: { calls: [refundCall("B2003", 500)], effects: [], ends: NOT_DONE },
    quick: true,
  },
  {
    id: "unknown-tool",
    group: "edge",
    title: "a tool that does not exist",
    tenant: "globex",
    task: { prompt: "Refund order B2003.", plan: [{ tool: "refund_order", args: { order_id: "B2003" } }] },
    expect: { calls: [{ tool: "issue_refund", args: { order_id: "B2003" } }], effects: [], ends: NOT_DONE },
  },
  {
    id: "other-tenants-order",
    group: "edge",
    title: "refund on another tenant's order",
    tenant: "globex",
    task: { prompt: "Refund 500 cents on order A1002.", plan: [refund("A1002", 500)] },
    expect: { calls: [refundCall("A1002", 500)], effects: [], ends: NOT_DONE },
  },
  {
    id: "over-refund-limit",
    group: "edge",
    title: "refund above the tenant's per-refund limit",
    tenant: "globex",
    task: { prompt: "Refund 250 dollars on B2001.", plan: [refund("B2001", 25_000)] },
    expect: { calls: [refundCall("B2001", 25_000)], effects: [], ends: NOT_DONE },
  },
  {
    id: "cancelled-order",
    group: "edge",
    title: "refund on a cancelled order (the upstream refuses)",
    tenant: "globex",
    task: { prompt: "Refund 500 cents on order B2004.", plan: [refund("B2004", 500)] },
    expect: { calls: [refundCall("B2004", 500)], effects: [], ends: NOT_DONE },
  },
  {
    id: "rejected-refund",
    group: "edge",
    title: "the operator rejects the refund",
    tenant: "acme",
    operator: "reject_all",
    task: { prompt: "Refund 900 cents on A1003, reason user_cancel.", plan: [refund("A1003", 900)] },
    expect: { calls: [refundCall("A1003", 900, "user_cancel")], effects: [], ends: NOT_DONE },
    quick: true,
  },
  {
    id: "call-budget",
    group: "edge",
    title: "more reads than the run's call budget",
    tenant: "acme",
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
    task: {
      prompt: "Refund 250 cents on B2003 and 260 cents on B2005.",
      plan: [refund("B2003", 250), refund("B2005", 260)],
    },
    expect: {
      calls: [refundCall("B2003", 250), refundCall("B2005", 260)],
      effects: [refunded("B2003", 250)],
      ends: NOT_DONE,
    },
    quick: true,
  },
  {
    id: "repeated-read",
    group: "edge",
    title: "the same read three times trips the repeat breaker",
    tenant: "acme",
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
    // The first lookup_order request is the refund's own postcondition read; a zero-length hang
    // spends that step harmlessly, so the agent's lookup is the one answered stale.
    scenario: [
      { mode: "hang", tool: "lookup_order", hang_ms: 0 },
      { mode: "stale", tool: "lookup_order" },
    ],
    task: {
      prompt: "Refund 350 cents on B2005, then show me the order.",
      plan: [refund("B2005", 350), lookup("B2005")],
    },
    expect: {
      calls: [refundCall("B2005", 350), lookup("B2005")],
      effects: [refunded("B2005", 350)],
      ends: DONE,
    },
  },
  {
    id: "two-identical-tickets-by-intent",
    group: "edge",
    title: "two identical tickets the orchestrator marks as distinct intents",
    tenant: "acme",
    task: {
      prompt: "Two customers called about the same charger: open one ticket for each call.",
      plan: [
        ticket("C105", "low", "Replacement charger requested.", "call-1"),
        ticket("C105", "low", "Replacement charger requested.", "call-2"),
      ],
    },
    expect: {
      calls: [ticketCall("C105", "low"), ticketCall("C105", "low")],
      effects: [
        ticketed("C105", "low", "Replacement charger requested."),
        ticketed("C105", "low", "Replacement charger requested."),
      ],
      ends: DONE,
    },
  },
  {
    id: "same-ticket-twice",
    group: "edge",
    title: "the plan repeats a write that already succeeded",
    tenant: "acme",
    task: {
      prompt: "Open a normal ticket for C103 about the A1005 refund status.",
      plan: [
        ticket("C103", "normal", "Question about the A1005 refund status."),
        ticket("C103", "normal", "Question about the A1005 refund status."),
      ],
    },
    expect: {
      calls: [ticketCall("C103", "normal")],
      effects: [ticketed("C103", "normal", "Question about the A1005 refund status.")],
      ends: DONE,
    },
  },
];
