import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import { catalog } from "../../src/tools";
import { missingBindings, resolveUpstream } from "../../src/upstream/bindings";
import { envelopeSchema } from "../../src/wire/envelope";

describe("tool bindings", () => {
  it("names every tool whose binding the environment lacks", () => {
    const { PAYMENTS_API: _payments, EMAIL_API: _email, ...partial } = env;
    expect(missingBindings(catalog, partial, "sandbox")).toEqual([
      expect.stringContaining('tool "draft_customer_email" needs binding "EMAIL_API"'),
      expect.stringContaining('tool "issue_refund" needs binding "PAYMENTS_API"'),
      expect.stringContaining('tool "send_customer_email" needs binding "EMAIL_API"'),
      expect.stringContaining('tool "lookup_email" needs binding "EMAIL_API"'),
    ]);
    expect(missingBindings(catalog, env, "sandbox")).toEqual([]);
  });

  it("refuses all traffic, saying which tool and binding, when a binding is missing", async () => {
    const { PAYMENTS_API: _payments, ...partial } = env;
    const response = await app.request("/healthz", {}, partial);
    const body = envelopeSchema().parse(await response.json());
    // /healthz reads "not serving" (503); every other path answers the same envelope (500).
    expect(response.status).toBe(503);
    expect(body.outcome).toBe("terminal_failure");
    expect(body.error?.message).toContain('tool "issue_refund" needs binding "PAYMENTS_API"');
    expect(body.error?.recommended_next_action).toBe("escalate_to_human");
  });

  it("accepts a service binding or an https URL var, and nothing else", () => {
    expect(resolveUpstream({ API: env.ORDERS_API }, { binding: "API" }, "sandbox")).not.toBeNull();
    expect(
      resolveUpstream({ API: "https://orders.api.example.com" }, { binding: "API" }, "sandbox"),
    ).not.toBeNull();
    expect(resolveUpstream({ API: "orders.api.example.com" }, { binding: "API" }, "sandbox")).toBeNull();
    expect(resolveUpstream({ API: 42 }, { binding: "API" }, "sandbox")).toBeNull();
    expect(resolveUpstream({}, { binding: "API" }, "sandbox")).toBeNull();
  });

  it("sends a URL-bound tool's request to that URL, path and query kept", async () => {
    const seen: string[] = [];
    const original = globalThis.fetch;
    globalThis.fetch = async (input: RequestInfo | URL) => {
      seen.push(new Request(input).url);
      return new Response("{}", { headers: { "content-type": "application/json" } });
    };
    try {
      const upstream = resolveUpstream(
        { API: "https://orders.api.example.com/v2/" },
        { binding: "API" },
        "sandbox",
      );
      await upstream?.fetch(new Request("https://upstream.internal/orders/A1001?expand=refunds"));
    } finally {
      globalThis.fetch = original;
    }
    expect(seen).toEqual(["https://orders.api.example.com/v2/orders/A1001?expand=refunds"]);
  });

  it("prefers the base URL a declaration gives for this environment to the binding of that name", async () => {
    const seen: string[] = [];
    const original = globalThis.fetch;
    globalThis.fetch = async (input: RequestInfo | URL) => {
      seen.push(new Request(input).url);
      return new Response("{}", { headers: { "content-type": "application/json" } });
    };
    const upstream = {
      binding: "API",
      base: { sandbox: "http://127.0.0.1:8790/v1", production: "https://api.example.com/v1" },
    };
    try {
      const bindings = { API: "https://bound.example.com" };
      await resolveUpstream(bindings, upstream, "sandbox")?.fetch(
        new Request("https://upstream.internal/skus/W-1"),
      );
      await resolveUpstream(bindings, upstream, "production")?.fetch(
        new Request("https://upstream.internal/skus/W-1"),
      );
      // An environment the declaration leaves out goes through the binding of the upstream's name.
      await resolveUpstream(
        bindings,
        { binding: "API", base: { sandbox: "http://127.0.0.1:1" } },
        "production",
      )?.fetch(new Request("https://upstream.internal/skus/W-1"));
    } finally {
      globalThis.fetch = original;
    }
    expect(seen).toEqual([
      "http://127.0.0.1:8790/v1/skus/W-1",
      "https://api.example.com/v1/skus/W-1",
      "https://bound.example.com/skus/W-1",
    ]);
    expect(
      resolveUpstream({}, { binding: "API", base: { sandbox: "http://127.0.0.1:1" } }, "production"),
    ).toBeNull();
  });
});
