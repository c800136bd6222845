import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { catalog } from "../../src/tools";
import { missingBindings, resolveUpstream } from "../../src/upstream/bindings";
import { EnvelopeSchema } from "../../src/wire/envelope";

describe("tool bindings", () => {
  it("names every tool whose binding the environment lacks", () => {
    const { PAYMENTS_API: _payments, EMAIL_API: _email, ...partial } = env;
    expect(missingBindings(catalog, partial)).toEqual([
      expect.stringContaining('tool "draft_customer_email" needs binding "EMAIL_API"'),
      expect.stringContaining('tool "issue_refund" needs binding "PAYMENTS_API"'),
      expect.stringContaining('tool "send_customer_email" needs binding "EMAIL_API"'),
      expect.stringContaining('tool "lookup_email" needs binding "EMAIL_API"'),
    ]);
    expect(missingBindings(catalog, env)).toEqual([]);
  });

  it("refuses all traffic, saying which tool and binding, when a binding is missing", async () => {
    const { PAYMENTS_API: _payments, ...partial } = env;
    const response = await app.request("/healthz", {}, partial);
    const body = EnvelopeSchema.parse(await response.json());
    // /healthz reads "not serving" (503); every other path answers the same envelope (500).
    expect(response.status).toBe(503);
    expect(body.outcome).toBe("terminal_failure");
    expect(body.error?.message).toContain('tool "issue_refund" needs binding "PAYMENTS_API"');
    expect(body.error?.recommended_next_action).toBe("escalate_to_human");
  });

  it("accepts a service binding or an https URL var, and nothing else", () => {
    expect(resolveUpstream({ API: env.ORDERS_API }, "API")).not.toBeNull();
    expect(resolveUpstream({ API: "https://orders.api.example.com" }, "API")).not.toBeNull();
    expect(resolveUpstream({ API: "orders.api.example.com" }, "API")).toBeNull();
    expect(resolveUpstream({ API: 42 }, "API")).toBeNull();
    expect(resolveUpstream({}, "API")).toBeNull();
  });

  it("sends a URL-bound tool's request to that URL, path and query kept", async () => {
    const seen: string[] = [];
    const original = globalThis.fetch;
    globalThis.fetch = async (input: RequestInfo | URL) => {
      seen.push(new Request(input).url);
      return new Response("{}", { headers: { "content-type": "application/json" } });
    };
    try {
      const upstream = resolveUpstream({ API: "https://orders.api.example.com/v2/" }, "API");
      await upstream?.fetch(new Request("https://upstream.internal/orders/A1001?expand=refunds"));
    } finally {
      globalThis.fetch = original;
    }
    expect(seen).toEqual(["https://orders.api.example.com/v2/orders/A1001?expand=refunds"]);
  });
});
