import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import devVarsExample from "../../.dev.vars.example?raw";
import { app } from "../../src/app";
import { loadConfig } from "../../src/config/load";
import { missingSecrets, OPTIONAL_SECRETS, REQUIRED_SECRETS } from "../../src/config/secrets";
import { compiledTenants } from "../../src/generated/tenants";
import worker from "../../src/index";
import { type Envelope, envelopeSchema } from "../../src/wire/envelope";

/** Variables `.dev.vars.example` sets that are no secret: how the local runtime stands in for Cloudflare. */
const LOCAL_ONLY = ["RESIDENCY"];

/** The variables `.dev.vars.example` sets: the secrets a local proxy runs with. */
const exampleSecrets = [...devVarsExample.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)]
  .map((match) => match[1])
  .filter((name) => name !== undefined && !LOCAL_ONLY.includes(name));

/** The environment without the named secrets, as a deploy that forgot them would see it. */
function without(...names: string[]): typeof env {
  const partial: Record<string, unknown> = { ...env };
  for (const name of names) delete partial[name];
  return partial as unknown as typeof env;
}

/** A request through the Worker's own entry (OAuth provider included), as production serves it. */
async function serve(path: string, environment: typeof env, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`https://proxy.example.com${path}`, init) as Request<unknown, IncomingRequestCfProperties>,
    environment,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  let body: Envelope | null = null;
  try {
    body = envelopeSchema().parse(JSON.parse(text));
  } catch {
    // reported by the assertion below
  }
  return { status: response.status, body, text };
}

function expectRefusal(body: Envelope | null, missing: string[]) {
  expect(body?.outcome).toBe("terminal_failure");
  expect(body?.error?.code).toBe("internal_error");
  expect(body?.error?.recommended_next_action).toBe("escalate_to_human");
  expect(body?.error?.details).toEqual({ missing_secrets: missing });
  for (const name of missing) expect(body?.error?.message).toContain(name);
  expect(body?.error?.message).toContain("npx wrangler secret bulk secrets.sandbox.json --env sandbox");
  expect(body?.error?.message).toContain("secrets.production.example.json");
}

describe("start-up check: secrets", () => {
  it("requires exactly the secrets .dev.vars.example sets, less the optional ones", () => {
    expect([...REQUIRED_SECRETS, ...OPTIONAL_SECRETS].sort()).toEqual([...exampleSecrets].sort());
    expect(missingSecrets(env)).toEqual([]);
  });

  it("counts an empty or blank secret as missing", () => {
    expect(missingSecrets({ ...env, TENANT_KEYS: "", RUN_TOKEN_KEYS: "  " })).toEqual([
      "TENANT_KEYS",
      "RUN_TOKEN_KEYS",
    ]);
  });

  it("names every missing secret, and how to set it, on every route; /healthz says 503", async () => {
    const bare = without(...REQUIRED_SECRETS);
    const requests: Array<[string, RequestInit?]> = [
      ["/healthz"],
      ["/v1/runs", { method: "POST", headers: { authorization: "Bearer acme-demo-key" }, body: "{}" }],
      ["/v1/approvals?state=pending", { headers: { authorization: "Bearer acme-operator-key" } }],
      ["/mcp", { method: "POST", headers: { authorization: "Bearer a:b:c" }, body: "{}" }],
      ["/console"],
      ["/openapi.json"],
      // The OAuth provider's own endpoints answer the same refusal.
      ["/token", { method: "POST", body: "grant_type=client_credentials" }],
      ["/.well-known/oauth-authorization-server"],
      ["/no-such-path"],
    ];
    for (const [path, init] of requests) {
      const { status, body, text } = await serve(path, bare, init);
      expect(body, `${path} answered ${status} ${text.slice(0, 200)}`).not.toBeNull();
      expect(status, path).toBe(path === "/healthz" ? 503 : 500);
      expectRefusal(body, [...REQUIRED_SECRETS]);
    }
  });

  it("names only the secrets that are missing, one at a time", async () => {
    for (const name of REQUIRED_SECRETS) {
      const response = await app.request("/healthz", {}, without(name));
      expect(response.status).toBe(503);
      const body = envelopeSchema().parse(await response.json());
      expectRefusal(body, [name]);
      expect(body.error?.message).toContain(`the secret ${name} is not set`);
      for (const other of REQUIRED_SECRETS.filter((secret) => secret !== name))
        expect(body.error?.message).not.toContain(other);
    }
  });

  it("serves without the optional secrets", async () => {
    const { status, body } = await serve("/healthz", without(...OPTIONAL_SECRETS));
    expect(status).toBe(200);
    expect(body?.outcome).toBe("success");
  });

  it("still names a secret that is set but malformed", async () => {
    const response = await app.request("/v1/runs", { method: "POST" }, { ...env, OPERATOR_KEYS: "[]" });
    expect(response.status).toBe(500);
    const body = envelopeSchema().parse(await response.json());
    expect(body.error?.message).toContain("OPERATOR_KEYS must be a JSON object");
    expect(body.error?.details).toBeNull();
  });
});

describe("start-up: the TENANTS a deploy ships", () => {
  it("is taken as npm run tools -- compile parsed it, from the binding wrangler.toml gives the Worker", () => {
    const compiled = compiledTenants.find((entry) => entry.environment === "sandbox");
    // The very value compile wrote: no schema built, no second parse.
    expect(loadConfig(env).tenants).toBe(compiled?.tenants);
  });

  it("is parsed, and a bad value refused at start-up, once it differs from the compiled table", async () => {
    const tenants = structuredClone(env.TENANTS) as Record<string, Record<string, unknown>>;
    tenants.acme = { ...tenants.acme, effect_shards: 0 };
    const { status, body } = await serve("/healthz", { ...env, TENANTS: tenants } as typeof env);
    expect(status).toBe(503);
    expect(body?.error?.message).toContain(
      'TENANTS is invalid at "acme.effect_shards": must be an integer from 1 to 64 (got 0)',
    );
  });
});
