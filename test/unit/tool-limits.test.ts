import { describe, expect, it } from "vitest";
import {
  type DeployedTenant,
  parseEnvironmentTenants,
  toolLimitsProblems,
} from "../../scripts/tools/tenants-check";
import { parseTenants } from "../../src/config/tenants";
import { takeToken } from "../../src/ratelimit/token-bucket";
import { TOOL_LIMIT_SHARDS, toolBucket, toolRefusal } from "../../src/ratelimit/tool-limits";

const tenant = {
  namespaces: ["support"],
  ceilings: { max_calls: 5, max_writes: 1, max_destructive: 1, deadline_s: 60 },
  max_refund_cents: 100,
};

describe("tool limits in TENANTS, as the Worker reads them", () => {
  it("reads a limit per tool and per subject, the window defaulting to 60 s", () => {
    const parsed = parseTenants({
      t: { ...tenant, tool_limits: { support: { issue_refund: { calls: 3, per: "order_id" } } } },
    });
    expect(parsed.t?.tool_limits).toEqual({
      support: { issue_refund: { calls: 3, window_s: 60, per: "order_id" } },
    });
    expect(parseTenants({ t: tenant }).t?.tool_limits).toEqual({});
  });

  it("refuses a namespace outside the tenant's, a non-positive count or window, a window over 60 s and a bad argument name, each where it is written", () => {
    const bad = {
      ...tenant,
      tool_limits: {
        shipping: { reroute_shipment: { calls: 1 } },
        support: {
          lookup_order: { calls: 0 },
          issue_refund: { calls: 2, window_s: 0 },
          get_customer_profile: { calls: 2, window_s: 61 },
          create_internal_ticket: { calls: 2, per: "customer id" },
        },
      },
    };
    const message = (() => {
      try {
        parseTenants({ t: bad });
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message.split("; ")).toEqual([
      'TENANTS is invalid at "t.tool_limits.support.lookup_order.calls": must be an integer from 1 to 1000000 (got 0)',
      'TENANTS is invalid at "t.tool_limits.support.issue_refund.window_s": must be an integer from 1 to 60 (got 0)',
      'TENANTS is invalid at "t.tool_limits.support.get_customer_profile.window_s": must be an integer from 1 to 60 (got 61)',
      'TENANTS is invalid at "t.tool_limits.support.create_internal_ticket.per": "customer id" is not an argument name: letters, digits and _, such as customer_id',
      `TENANTS is invalid at "t.tool_limits.shipping": "shipping" is not one of the tenant's namespaces (support)`,
    ]);
  });
});

describe("tool limits checked against the catalog by npm run tools -- check", () => {
  const parsed = parseEnvironmentTenants("sandbox", {
    t: {
      ...tenant,
      tool_limits: {
        support: {
          lookup_order: { calls: 5 },
          lookup_orders: { calls: 5 },
          create_internal_ticket: { calls: 2, per: "customer" },
        },
      },
    },
  });
  const catalog = new Map([
    [
      "support",
      new Map<string, readonly string[] | undefined>([
        ["lookup_order", ["order_id"]],
        ["create_internal_ticket", ["customer_id", "priority", "summary"]],
      ]),
    ],
  ]);

  it("names a tool the namespace does not have and an argument the tool does not take", () => {
    expect(parsed.problems).toEqual([]);
    const tenants: DeployedTenant[] = parsed.tenants;
    const at = "wrangler.toml: env.sandbox.vars.TENANTS.t.tool_limits.support";
    expect(toolLimitsProblems(tenants, catalog)).toEqual([
      `${at}.lookup_orders: "lookup_orders" is not a tool of support (it has lookup_order, create_internal_ticket)`,
      `${at}.create_internal_ticket.per: "customer" is not an argument of create_internal_ticket (it takes customer_id, priority, summary)`,
    ]);
  });

  it("locates a namespace outside the tenant's in wrangler.toml", () => {
    const outside = parseEnvironmentTenants("production", {
      t: { ...tenant, tool_limits: { shipping: { reroute_shipment: { calls: 1 } } } },
    });
    expect(outside.problems).toEqual([
      `wrangler.toml: env.production.vars.TENANTS.t.tool_limits.shipping: "shipping" is not one of the tenant's namespaces (support)`,
    ]);
  });
});

describe("a tool's bucket", () => {
  const perCustomer = { calls: 2, window_s: 60, per: "customer_id" };

  it("is one per subject, the same for the same subject in any run, and lives in one shard", () => {
    const a = toolBucket("support", "create_internal_ticket", perCustomer, {
      customer_id: "C100",
      summary: "x",
    });
    const again = toolBucket("support", "create_internal_ticket", perCustomer, {
      customer_id: "C100",
      summary: "y",
    });
    const b = toolBucket("support", "create_internal_ticket", perCustomer, { customer_id: "C101" });
    expect(again).toEqual(a);
    expect(b.bucket.key).not.toBe(a.bucket.key);
    expect(a.subject).toBe("C100");
    for (const { shard } of [a, b]) expect(shard).toBeGreaterThanOrEqual(0);
    for (const { shard } of [a, b]) expect(shard).toBeLessThan(TOOL_LIMIT_SHARDS);
    const whole = toolBucket("support", "lookup_order", { calls: 5, window_s: 10 }, { order_id: "A1" });
    expect(whole).toMatchObject({
      bucket: { key: "tool:support/lookup_order", limit: 5, window_ms: 10_000 },
      subject: null,
    });
  });

  it("refuses the call over the limit with a wait after which the call is admitted, not a moment before", () => {
    const { bucket, subject } = toolBucket("support", "create_internal_ticket", perCustomer, {
      customer_id: "C100",
    });
    let tat: number | undefined;
    for (const now of [1_000, 2_000]) {
      const taken = takeToken(tat, bucket, now);
      if (!taken.ok) throw new Error("the first two calls fit");
      tat = taken.tat;
    }
    const over = takeToken(tat, bucket, 5_000);
    expect(over).toEqual({ ok: false, retry_after_ms: 26_000 });
    if (over.ok) return;
    const refusal = toolRefusal("create_internal_ticket", perCustomer, subject, over.retry_after_ms);
    expect(refusal).toMatchObject({
      code: "rate_limited",
      retry_after_ms: 26_000,
      side_effect_confirmed: false,
      details: {
        scope: "tool_calls",
        tool: "create_internal_ticket",
        limit: 2,
        window_s: 60,
        per: "customer_id",
        subject: "C100",
      },
    });
    expect(refusal.message).toContain("Wait 26 s");
    expect(takeToken(tat, bucket, 5_000 + over.retry_after_ms - 1).ok).toBe(false);
    expect(takeToken(tat, bucket, 5_000 + over.retry_after_ms).ok).toBe(true);
  });
});
