import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { envelopeSchema } from "../../src/wire/envelope";

/** The URL vars of wrangler.toml's [env.production.vars], as shipped. */
const SHIPPED = {
  ORDERS_API: "https://orders.api.example.com",
  PAYMENTS_API: "https://payments.api.example.net",
  CRM_API: "https://crm.api.example.org",
  EMAIL_API: "http://127.0.0.1:8790",
  SHIPMENTS_API: "https://shipments.invalid",
};

/** This test's bindings as a production deploy with `vars` would see them (no local-only vars). */
function production(vars: Record<string, string>): typeof env {
  return {
    ...env,
    ENVIRONMENT: "production",
    FAULT_INJECTION: undefined,
    RESIDENCY: undefined,
    ...vars,
  } as unknown as typeof env;
}

async function serve(path: string, environment: typeof env, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`https://proxy.acme-corp.com${path}`, init) as Request<unknown, IncomingRequestCfProperties>,
    environment,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: envelopeSchema().parse(await response.json()) };
}

describe("start-up check: a production deploy with placeholder upstream URLs", () => {
  it("refuses every route with one 503-on-/healthz envelope naming each var, its value and where to set it", async () => {
    const deployed = production(SHIPPED);
    for (const path of [
      "/healthz",
      "/v1/runs",
      "/mcp",
      "/console",
      "/.well-known/oauth-authorization-server",
    ]) {
      const { status, body } = await serve(path, deployed);
      expect(status, path).toBe(path === "/healthz" ? 503 : 500);
      expect(body.environment).toBe("production");
      expect(body.outcome).toBe("terminal_failure");
      expect(body.error?.code).toBe("internal_error");
      expect(body.error?.recommended_next_action).toBe("escalate_to_human");
      const message = body.error?.message ?? "";
      for (const [name, value] of Object.entries(SHIPPED)) {
        expect(message, path).toContain(`${name} is "${value}"`);
        expect(message, path).toContain(`set ${name} in [env.production.vars] in wrangler.toml`);
      }
      expect(message).toContain("example.com is reserved for documentation");
      expect(message).toContain("the top-level name .invalid never resolves");
      expect(message).toContain("this machine (127.0.0.1)");
    }
  });

  it("serves once every URL is a real API's, and the sandbox keeps its loopback and service bindings", async () => {
    const real = Object.fromEntries(
      Object.keys(SHIPPED).map((name) => [name, `https://${name.toLowerCase()}.acme-corp.com`]),
    );
    const deployed = await serve("/healthz", production({ ...real, METRICS_ACCOUNT_ID: "" }));
    expect(deployed.status).toBe(200);
    expect(deployed.body.environment).toBe("production");
    const sandbox = await serve("/healthz", {
      ...env,
      EMAIL_API: "http://127.0.0.1:8790",
    } as unknown as typeof env);
    expect(sandbox.status).toBe(200);
    expect(sandbox.body.environment).toBe("sandbox");
  });
});
