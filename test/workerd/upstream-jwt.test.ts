import { env, exports } from "cloudflare:workers";
import {
  base64url,
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  decodeProtectedHeader,
  type JSONWebKeySet,
  jwtVerify,
  SignJWT,
} from "jose";
import { describe, expect, it } from "vitest";
import sandboxVarsExample from "../../sandbox/.dev.vars.example?raw";
import type { PresentedCredential } from "../../sandbox/src/model";
import {
  parseUpstreamJwks,
  parseUpstreamSigningKeys,
  type UpstreamSigningKey,
} from "../../src/config/signing-keys";
import { catalog } from "../../src/tools";
import { issueUpstreamCredential, UPSTREAM_CREDENTIAL_ISSUER } from "../../src/upstream/credential";
import {
  assertNoSecrets,
  callTool,
  openRun,
  refundsOf,
  request,
  sandbox,
  sandboxRequests,
  type TestRun,
} from "./helpers";
import { configuredSigningKeys } from "./upstream-credentials";

/**
 * Upstream credentials are JWTs signed with the proxy's Ed25519 key. An upstream verifies them with
 * public keys only, from `GET /.well-known/jwks.json`, and accepts one only for the tool it serves.
 */

const JWKS_URL = "https://proxy.test/.well-known/jwks.json";

async function getJwks(): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await exports.default.fetch(new Request(JWKS_URL));
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** What a production upstream does: jose's remote key set on the proxy's endpoint (here reached in-process). */
const proxyKeySet = () =>
  createRemoteJWKSet(new URL(JWKS_URL), {
    [customFetch]: (url, init) => exports.default.fetch(new Request(url, init)),
  });

/** The credential the proxy presented to the sandbox for one tool of a run, from the sandbox's leaky log. */
async function presentedCredential(run: TestRun, tool: string): Promise<string> {
  const { credentials } = await sandbox<{ credentials: PresentedCredential[] }>(
    `/_admin/credentials?run_id=${encodeURIComponent(run.id)}`,
  );
  const credential = credentials.find((entry) => entry.tool === tool)?.credential;
  if (!credential) throw new Error(`the sandbox was shown no ${tool} credential for ${run.id}`);
  return credential;
}

/** A call straight to the sandbox with a credential, as an attacker holding a leaked one would make it. */
async function callSandbox(credential: string, method: "GET" | "POST", path: string, body?: unknown) {
  const response = await env.ORDERS_API.fetch(`https://upstream.internal${path}`, {
    method,
    headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as { error?: { message: string } } };
}

const mint = (keys: UpstreamSigningKey[], overrides: { tool?: string; exp?: number; run?: string } = {}) =>
  issueUpstreamCredential(
    {
      tenant: "acme",
      run: overrides.run ?? crypto.randomUUID(),
      tool: overrides.tool ?? "lookup_order",
      exp: overrides.exp ?? Date.now() + 60_000,
      request: { method: "GET", target: "/orders/A1001", body: null, idempotency_key: null },
    },
    keys,
  );

describe("GET /.well-known/jwks.json", () => {
  it("publishes every configured key, current and retired, with public members only", async () => {
    const { status, headers, text } = await getJwks();
    expect(status).toBe(200);
    expect(headers.get("content-type")).toContain("application/json");
    expect(headers.get("cache-control")).toMatch(/max-age=\d+/);
    const jwks = JSON.parse(text) as JSONWebKeySet;
    expect(jwks.keys.map((key) => key.kid)).toEqual(configuredSigningKeys().map((key) => key.kid));
    for (const key of jwks.keys) {
      expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
      expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
      for (const member of ["d", "p", "q", "dp", "dq", "qi", "oth", "k"])
        expect(key).not.toHaveProperty(member);
    }
    // The test suite's scan for private key material passes it, and the set is one an upstream accepts.
    assertNoSecrets(text);
    expect(parseUpstreamJwks(text)).toEqual(jwks);
  });

  it("is exactly the set the sandbox pins as UPSTREAM_JWKS, so a demo key rotation changes both files", async () => {
    const pinned = /^UPSTREAM_JWKS=(.*)$/m.exec(sandboxVarsExample)?.[1];
    expect(pinned, "sandbox/.dev.vars.example sets UPSTREAM_JWKS").toBeDefined();
    expect(JSON.parse(pinned as string)).toEqual(JSON.parse((await getJwks()).text));
  });
});

describe("a credential the proxy presents upstream", () => {
  it("is a JWT that jose verifies against the proxy's JWKS: iss, sub = tenant, aud = tool, run, the request, exp, iat, jti, kid", async () => {
    const run = await openRun("acme");
    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    const token = await presentedCredential(run, "lookup_order");

    const { payload, protectedHeader } = await jwtVerify(token, proxyKeySet(), {
      algorithms: ["EdDSA"],
      issuer: UPSTREAM_CREDENTIAL_ISSUER,
      audience: "lookup_order",
      requiredClaims: ["sub", "run", "exp", "iat", "jti", "htm", "htu", "body_sha256"],
    });
    expect(protectedHeader).toEqual({ alg: "EdDSA", kid: configuredSigningKeys()[0]?.kid, typ: "JWT" });
    expect(payload).toMatchObject({
      sub: "acme",
      aud: "lookup_order",
      run: run.id,
      htm: "GET",
      htu: "/orders/A1001",
      // The SHA-256 of no body at all, base64url.
      body_sha256: "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
      idempotency_key: null,
    });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    // lookup_order's timeout (one attempt's) plus the 2 s margin, rounded down to whole seconds.
    const lifetime = (payload.exp as number) - (payload.iat as number);
    const seconds = (catalog.find("support", "lookup_order")?.timeout_ms ?? Number.NaN) / 1_000;
    expect(lifetime).toBeGreaterThanOrEqual(seconds + 1);
    expect(lifetime).toBeLessThanOrEqual(seconds + 2);
  });

  it("is refused with 401 by the sandbox for any other tool's endpoint: a lookup_order credential creates no refund", async () => {
    const run = await openRun("acme");
    expect((await callTool(run, "lookup_order", { order_id: "A1003" })).body.outcome).toBe("success");
    const token = await presentedCredential(run, "lookup_order");
    const refundsBefore = await refundsOf("A1003");

    const refund = await callSandbox(token, "POST", "/refunds", {
      order_id: "A1003",
      amount_cents: 100,
      reason: "user_cancel",
    });
    expect(refund.status).toBe(401);
    expect(refund.body.error?.message).toBe("The credential was issued for another tool.");
    expect((await callSandbox(token, "GET", "/customers/C100")).status).toBe(401);
    expect(await refundsOf("A1003")).toEqual(refundsBefore);
    // The sandbox saw the attempts and logged them as refused, under no run: none was authenticated.
    const refused = (
      await sandbox<{ requests: Array<{ path: string; status: number; run_id: string | null }> }>(
        "/_admin/requests",
      )
    ).requests.filter((entry) => entry.path === "/refunds" && entry.status === 401);
    expect(refused.length).toBeGreaterThan(0);
    expect((await sandboxRequests(run.id)).map((entry) => entry.path)).toEqual(["/orders/A1003"]);
    // Control: for its own tool it still works.
    expect((await callSandbox(token, "GET", "/orders/A1003")).status).toBe(200);
  });

  it("is good for its one request: a leaked refund credential sends no other amount, key or target, even after the run ends", async () => {
    const run = await openRun("globex");
    const args = { order_id: "B2003", amount_cents: 300, reason: "user_cancel" };
    const sent = await callTool(run, "issue_refund", args);
    expect(sent.body.outcome, JSON.stringify(sent.body.error)).toBe("success");
    const token = await presentedCredential(run, "issue_refund");
    expect(decodeJwt(token)).toMatchObject({
      htm: "POST",
      htu: "/refunds",
      idempotency_key: sent.body.idempotency_key,
    });
    const before = await refundsOf("B2003");

    const attempt = (body: unknown, key: string | null) =>
      env.ORDERS_API.fetch("https://upstream.internal/refunds", {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          ...(key === null ? {} : { "idempotency-key": key }),
        },
        body: JSON.stringify(body),
      });
    const another = { ...args, amount_cents: 900 };
    for (const [body, key] of [
      [another, sent.body.idempotency_key as string],
      [another, "a-new-key-of-the-attacker"],
      [args, "a-new-key-of-the-attacker"],
      [args, null],
    ] as const) {
      const answer = await attempt(body, key);
      expect(answer.status).toBe(401);
      expect(await answer.json()).toMatchObject({
        error: { message: expect.stringContaining("issued for another request") },
      });
    }
    await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect((await attempt(another, "after-the-end")).status).toBe(401);
    expect(await refundsOf("B2003")).toEqual(before);
  });

  it("never outlives its run's deadline", async () => {
    // Five seconds leave a loaded machine time for the call; the deadline still comes first.
    const run = await openRun("acme", { namespace: "support", limits: { deadline_s: 5 } });
    const deadline = Date.parse(String(run.data.deadline_at));
    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    const { exp } = decodeJwt(await presentedCredential(run, "lookup_order"));
    // lookup_order's timeout (10 s) plus the margin would give 12 s; the deadline caps it.
    expect((exp as number) * 1_000).toBeLessThanOrEqual(deadline + 1_000);
  });

  it("is refused with 401 once expired", async () => {
    const expired = await mint(configuredSigningKeys(), { exp: Date.now() - 1_000 });
    const answer = await callSandbox(expired, "GET", "/orders/A1001");
    expect(answer.status).toBe(401);
    expect(answer.body.error?.message).toBe("The credential has expired.");
  });

  it("is refused with 401 when tampered with: another tenant in the payload, a stripped or swapped algorithm", async () => {
    const token = await mint(configuredSigningKeys());
    expect((await callSandbox(token, "GET", "/orders/A1001")).status).toBe(200);
    const [header, payload, signature] = token.split(".") as [string, string, string];

    const otherTenant = base64url.encode(JSON.stringify({ ...decodeJwt(token), sub: "globex" }));
    const forged = await callSandbox(`${header}.${otherTenant}.${signature}`, "GET", "/orders/G2001");
    expect(forged.status).toBe(401);
    expect(forged.body.error?.message).toBe("The credential signature is invalid.");

    const unsigned = base64url.encode(JSON.stringify({ ...decodeProtectedHeader(token), alg: "none" }));
    expect((await callSandbox(`${unsigned}.${payload}.`, "GET", "/orders/A1001")).status).toBe(401);

    // The classic confusion: HS256 keyed with the public key everyone can read.
    const publicX = (configuredSigningKeys()[0] as UpstreamSigningKey).x;
    const hmac = await new SignJWT(decodeJwt(token))
      .setProtectedHeader({ alg: "HS256", kid: decodeProtectedHeader(token).kid as string })
      .sign(new TextEncoder().encode(publicX));
    expect((await callSandbox(hmac, "GET", "/orders/A1001")).status).toBe(401);
  });

  it("verifies during the overlap when signed with the retired key, at the sandbox and against the JWKS", async () => {
    const [current, retired] = configuredSigningKeys() as [UpstreamSigningKey, UpstreamSigningKey];
    const token = await mint([retired, current]);
    expect(decodeProtectedHeader(token).kid).toBe(retired.kid);
    expect((await callSandbox(token, "GET", "/orders/A1001")).status).toBe(200);
    await expect(
      jwtVerify(token, proxyKeySet(), { issuer: UPSTREAM_CREDENTIAL_ISSUER, audience: "lookup_order" }),
    ).resolves.toMatchObject({ protectedHeader: { kid: retired.kid } });
  });

  it("is caught by the suite's secret scan, as is any private signing key", async () => {
    const [current] = configuredSigningKeys() as [UpstreamSigningKey];
    const token = await mint([current]);
    expect(() => assertNoSecrets(JSON.stringify({ note: `Bearer ${token}` }))).toThrow(/JWT/);
    expect(() => assertNoSecrets(JSON.stringify({ kty: "OKP", crv: "Ed25519", d: "redacted" }))).toThrow(
      /private JWK/,
    );
    expect(() => assertNoSecrets(`seed ${current.d}`)).toThrow(/leaked a secret/);
  });
});

describe("the keys' configuration", () => {
  it("refuses a signing-key list that is not Ed25519 private JWKs with distinct kids, without echoing it", () => {
    const [current] = configuredSigningKeys() as [UpstreamSigningKey];
    for (const raw of [
      "",
      "[]",
      '["an-old-hmac-key-of-32-characters"]',
      JSON.stringify([{ ...current, d: undefined }]),
      JSON.stringify([current, current]),
    ]) {
      expect(() => parseUpstreamSigningKeys("UPSTREAM_SIGNING_KEYS", raw)).toThrow(
        /^UPSTREAM_SIGNING_KEYS must be a JSON array of at least one Ed25519 private JWK/,
      );
    }
    try {
      parseUpstreamSigningKeys("UPSTREAM_SIGNING_KEYS", JSON.stringify([current, current]));
    } catch (error) {
      expect(String(error)).not.toContain(current.d);
    }
  });

  it("refuses an upstream key set that holds a private key, so an upstream can never sign", () => {
    expect(parseUpstreamJwks(JSON.stringify({ keys: configuredSigningKeys() }))).toBeNull();
    expect(parseUpstreamJwks(JSON.stringify({ keys: [] }))).toBeNull();
    expect(parseUpstreamJwks("not json")).toBeNull();
  });
});
