import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { signedInOperator } from "./console-client";
import { KEYS } from "./helpers";
import { pkcePair, REDIRECT_URI } from "./oauth-client";

/** The console's policy as it has always been: scripts and fetches from this origin only. */
const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async function get(url: string, init: RequestInit = {}) {
  const response = await exports.default.fetch(new Request(url, { redirect: "manual", ...init }));
  await response.arrayBuffer();
  return response;
}

function expectBaseline(headers: Headers, what: string) {
  expect(headers.get("x-content-type-options"), what).toBe("nosniff");
  expect(headers.get("cross-origin-opener-policy"), what).toBeNull();
}

/** A new run's tool call and a refused one: the entry sends both straight to the app. */
async function toolCalls(origin: string) {
  const opened = await exports.default.fetch(
    new Request(`${origin}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEYS.acme}`, "content-type": "application/json" },
      body: JSON.stringify({ namespace: "support" }),
    }),
  );
  const run = ((await opened.json()) as { data: { run_id: string; run_token: string } }).data;
  const call = (authorization: string) =>
    get(`${origin}/v1/runs/${run.run_id}/calls`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify({ tool: "lookup_order", args: { order_id: "A1001" } }),
    });
  const answered = await call(`Bearer ${run.run_token}`);
  const refused = await call("Bearer not-a-run-token");
  expect([answered.status, refused.status]).toEqual([200, 401]);
  return { "API: a tool call": answered.headers, "API: a refused tool call": refused.headers };
}

/** The answers of every part of the Worker, over https. */
async function everyPart(origin: string) {
  const operator = await signedInOperator("acme");
  const registered = await exports.default.fetch(
    new Request(`${origin}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Headers client",
        application_type: "native",
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: "none",
      }),
    }),
  );
  const client = (await registered.json()) as { client_id: string };
  const { challenge } = await pkcePair();
  const consent = await operator.get(
    `/authorize?${new URLSearchParams({
      response_type: "code",
      redirect_uri: REDIRECT_URI,
      state: "st-1",
      client_id: client.client_id,
      code_challenge: challenge,
      code_challenge_method: "S256",
    })}`,
  );
  expect(consent.status).toBe(200);
  return {
    ...(await toolCalls(origin)),
    "API: GET /healthz": (await get(`${origin}/healthz`)).headers,
    "API: POST /v1/runs": (
      await get(`${origin}/v1/runs`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEYS.acme}`, "content-type": "application/json" },
        body: JSON.stringify({ namespace: "support" }),
      })
    ).headers,
    "API: an unknown route": (await get(`${origin}/v1/nothing-here`)).headers,
    "docs: GET /docs": (await get(`${origin}/docs`)).headers,
    "docs: GET /openapi.json": (await get(`${origin}/openapi.json`)).headers,
    "console: GET /console/sign-in": (await get(`${origin}/console/sign-in`)).headers,
    "console: GET /console, signed in": (await operator.get("/console")).headers,
    "OAuth: the consent page": consent.headers,
    "OAuth: POST /register": registered.headers,
    "OAuth: the authorization server's metadata": (
      await get(`${origin}/.well-known/oauth-authorization-server`)
    ).headers,
    "OAuth: POST /token refused": (
      await get(`${origin}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials",
      })
    ).headers,
  };
}

describe("security headers on every answer (hono/secure-headers)", () => {
  it("sends nosniff and HSTS on the API, the docs, the console and the OAuth pages over https", async () => {
    for (const [what, headers] of Object.entries(await everyPart("https://proxy.test"))) {
      expectBaseline(headers, what);
      expect(headers.get("strict-transport-security"), what).toBe("max-age=15552000; includeSubDomains");
    }
  });

  it("sends nosniff but no HSTS over http, where a browser would ignore it", async () => {
    for (const path of ["/healthz", "/docs", "/console/sign-in", "/.well-known/oauth-authorization-server"]) {
      const { headers } = await get(`http://127.0.0.1:8787${path}`);
      expectBaseline(headers, path);
      expect(headers.get("strict-transport-security"), path).toBeNull();
    }
    for (const [what, headers] of Object.entries(await toolCalls("http://127.0.0.1:8787"))) {
      expectBaseline(headers, what);
      expect(headers.get("strict-transport-security"), what).toBeNull();
    }
  });

  it("keeps the console's policy exactly as strict as before, on every page", async () => {
    const operator = await signedInOperator("acme");
    for (const path of ["/console/sign-in", "/console", "/console/approvals", "/console/no-such-page"]) {
      const { headers } = await operator.get(path);
      expect(headers.get("content-security-policy"), path).toBe(CONSOLE_CSP);
      expect(headers.get("x-frame-options"), path).toBe("DENY");
      expect(headers.get("referrer-policy"), path).toBe("same-origin");
      expect(headers.get("cache-control"), path).toBe("no-store");
      expect(headers.get("x-content-type-options"), path).toBe("nosniff");
    }
    // The console's one script is cached as before, under the same policy.
    const script = await operator.get("/console/assets/live.js");
    expect(script.headers.get("cache-control")).toBe("public, max-age=300");
    expect(script.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
  });

  it("lets the consent page's form answer redirect to the client's origin, and nowhere else", async () => {
    const { "OAuth: the consent page": consent } = await everyPart("https://proxy.test");
    expect(consent.get("content-security-policy")).toBe(
      CONSOLE_CSP.replace("form-action 'self'", "form-action 'self' http://127.0.0.1:33418"),
    );
    expect(consent.get("x-frame-options")).toBe("DENY");
    expect(consent.get("cache-control")).toBe("no-store");
  });

  it("keeps the docs page's own policy", async () => {
    const { headers } = await get("https://proxy.test/docs");
    expect(headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'");
  });

  it("sends them on a refusal to start too, a tool call's among them", async () => {
    const bare: Record<string, unknown> = { ...env };
    delete bare.TENANT_KEYS;
    const refusal = async (request: Request) => {
      const ctx = createExecutionContext();
      const response = await worker.fetch(
        request as Request<unknown, IncomingRequestCfProperties>,
        bare as unknown as typeof env,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return response;
    };
    const health = await refusal(new Request("https://proxy.test/healthz"));
    expect(health.status).toBe(503);
    const call = await refusal(
      new Request("https://proxy.test/v1/runs/run_x/calls", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ tool: "lookup_order", args: {} }),
      }),
    );
    expect(call.status).toBe(500);
    expect(((await call.json()) as { error: { code: string } }).error.code).toBe("internal_error");
    for (const [what, response] of [
      ["a refusal", health],
      ["a tool call's refusal", call],
    ] as const) {
      expectBaseline(response.headers, what);
      expect(response.headers.get("strict-transport-security"), what).not.toBeNull();
    }
  });
});
