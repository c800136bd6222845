import { env } from "cloudflare:workers";
import { Client, UnauthorizedError } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { envelopeSchema } from "../../src/wire/envelope";
import { ConsoleClient, signedInOperator } from "./console-client";
import { openRun, request } from "./helpers";
import { bearer, envelopeOf, INITIALIZE, MCP_URL, ORIGIN, rpc, workerFetch } from "./mcp-client";
import { json, MemoryOAuthClient, pkcePair, REDIRECT_URI, transportFor } from "./oauth-client";

const RESOURCE_METADATA = `${ORIGIN}/.well-known/oauth-protected-resource/mcp`;

function pathOf(url: URL | string): string {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
}

/** The consent form's hidden handle. */
function handleOf(html: string): string {
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1];
  if (!handle) throw new Error(`no consent handle on the page: ${html.slice(0, 300)}`);
  return handle;
}

/** An operator opens the authorization URL, picks a profile and allows: the redirect to the client. */
async function consent(operator: ConsoleClient, authorizationUrl: URL | string, profile = "support") {
  const page = await operator.get(pathOf(authorizationUrl));
  expect(page.status, page.html.slice(0, 500)).toBe(200);
  const answer = await operator.post("/authorize", {
    csrf: operator.csrf,
    handle: handleOf(page.html),
    profile,
    decision: "approve",
  });
  expect(answer.status, answer.html.slice(0, 500)).toBe(302);
  return { page, location: new URL(answer.headers.get("location") ?? "") };
}

/**
 * The whole flow a real MCP client goes through: the 401, discovery, dynamic registration, the
 * operator's consent, and the code exchange. Returns a connected client and its stored OAuth state.
 */
async function authorizedClient(name: string, operator?: ConsoleClient) {
  const oauth = new MemoryOAuthClient(name);
  const first = new Client({ name: "oauth-test", version: "1.0.0" });
  const transport = transportFor(oauth);
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(oauth.client?.client_id).toBeTruthy();
  expect(oauth.authorizationUrl).toBeDefined();
  const { location } = await consent(
    operator ?? (await signedInOperator("acme")),
    oauth.authorizationUrl ?? "",
  );
  await transport.finishAuth(location.searchParams);
  expect(oauth.saved?.access_token).toBeTruthy();

  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(transportFor(oauth));
  return { oauth, client };
}

/** A raw MCP initialize with a bearer, for what the SDK client would retry or refresh on its own. */
function initializeWith(token: string) {
  return rpc(bearer(token), INITIALIZE);
}

/** Registers a public desktop client by hand (RFC 7591), as an MCP client does before authorizing. */
async function register(name: string, redirectUris: string[] = [REDIRECT_URI]) {
  return json("/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      application_type: "native",
      redirect_uris: redirectUris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  });
}

function authorizationPath(params: Record<string, string>): string {
  return `/authorize?${new URLSearchParams({ response_type: "code", redirect_uri: REDIRECT_URI, state: "st-1", ...params })}`;
}

function tokenRequest(form: Record<string, string>) {
  return json("/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
}

/** A client registered by hand that an operator authorized: its code and PKCE verifier, not yet exchanged. */
async function manualAuthorization(name: string, operator?: ConsoleClient) {
  const registered = await register(name);
  expect(registered.status).toBe(201);
  const clientId = String(registered.body.client_id);
  const { verifier, challenge } = await pkcePair();
  const { location } = await consent(
    operator ?? (await signedInOperator("acme")),
    `${ORIGIN}${authorizationPath({ client_id: clientId, code_challenge: challenge, code_challenge_method: "S256" })}`,
  );
  return { clientId, verifier, code: location.searchParams.get("code") ?? "" };
}

/** The consent page an operator of acme sees for a newly registered client asking with PKCE. */
async function consentPageFor(clientName: string) {
  const registered = await register(clientName);
  const { challenge } = await pkcePair();
  const operator = await signedInOperator("acme");
  const page = await operator.get(
    authorizationPath({
      client_id: String(registered.body.client_id),
      code_challenge: challenge,
      code_challenge_method: "S256",
    }),
  );
  return { operator, page };
}

async function exchange(auth: { clientId: string; verifier: string; code: string }) {
  return tokenRequest({
    grant_type: "authorization_code",
    client_id: auth.clientId,
    code: auth.code,
    redirect_uri: REDIRECT_URI,
    code_verifier: auth.verifier,
  });
}

/** The grant ids the console lists for the signed-in operator's tenant. */
function grantIdsOn(html: string): string[] {
  return [...html.matchAll(/\/console\/oauth\/grants\/([^/"]+)\/revoke/g)].map((match) => match[1] ?? "");
}

/** The id in the revoke button of the first table row that names `text` (a grant's or a client's). */
function revokeIdOf(html: string, kind: "grants" | "clients", text: string): string {
  const row = html
    .split("<tr>")
    .find((cells) => cells.includes(text) && cells.includes(`/console/oauth/${kind}/`));
  const id = row ? new RegExp(`/console/oauth/${kind}/([^/"]+)/revoke`).exec(row)?.[1] : undefined;
  if (!id) throw new Error(`no ${kind} row naming ${text}`);
  return id;
}

describe("OAuth discovery documents", () => {
  it("name this origin as the authorization server of /mcp, in both forms of the resource metadata", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource",
    ]) {
      const { status, body } = await json(path);
      expect(status, path).toBe(200);
      expect(body).toMatchObject({
        resource: MCP_URL,
        authorization_servers: [ORIGIN],
        bearer_methods_supported: ["header"],
      });
    }
  });

  it("publish authorization-server metadata with S256 PKCE, refresh tokens and dynamic registration", async () => {
    const { status, body } = await json("/.well-known/oauth-authorization-server");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/authorize`,
      token_endpoint: `${ORIGIN}/token`,
      registration_endpoint: `${ORIGIN}/register`,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code"],
      protected_resources: [MCP_URL],
    });
    expect(body.grant_types_supported).toEqual(
      expect.arrayContaining(["authorization_code", "refresh_token"]),
    );
    expect(body.token_endpoint_auth_methods_supported).toContain("none");
  });

  it("answers /mcp without a credential with 401 and a challenge naming the resource metadata", async () => {
    const response = await workerFetch(MCP_URL, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain(`resource_metadata="${RESOURCE_METADATA}"`);
    envelopeSchema().parse(await response.json());
  });
});

describe("dynamic client registration", () => {
  it("registers a public client with its redirect URI and no secret", async () => {
    const { status, body } = await register("Registration test client");
    expect(status).toBe(201);
    expect(body.client_id).toEqual(expect.any(String));
    expect(body.client_secret).toBeUndefined();
    expect(body).toMatchObject({
      client_name: "Registration test client",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
    });
  });

  it("refuses a client whose redirect URI could run script", async () => {
    const { status, body } = await register("Evil client", ["javascript:alert(1)"]);
    expect(status).toBe(400);
    expect(String(body.error)).toMatch(/invalid_redirect_uri|invalid_client_metadata/);
  });

  it("refuses a client name, a redirect list or a redirect URI over its bound with a 400 naming it, and keeps nothing", async () => {
    const cases: Array<[string, string[], string, RegExp]> = [
      [
        "x".repeat(201),
        [REDIRECT_URI],
        "invalid_client_metadata",
        /^client_name: 201 characters; at most 200/,
      ],
      [
        "Many redirects",
        Array.from({ length: 11 }, (_, i) => `${REDIRECT_URI}/${i}`),
        "invalid_redirect_uri",
        /^redirect_uris: 11 URIs; at most 10/,
      ],
      [
        "Long redirect",
        [REDIRECT_URI, `${REDIRECT_URI}?${"a".repeat(2_000)}`],
        "invalid_redirect_uri",
        /^redirect_uris\[1\]: longer than 2000/,
      ],
      [
        "Huge",
        [REDIRECT_URI, ...Array.from({ length: 8 }, () => `${REDIRECT_URI}?${"b".repeat(1_990)}`)],
        "invalid_client_metadata",
        /over 16384 bytes/,
      ],
    ];
    for (const [name, uris, error, description] of cases) {
      const { status, body } = await register(name, uris);
      expect(status, name.slice(0, 20)).toBe(400);
      expect(body.error).toBe(error);
      expect(String(body.error_description)).toMatch(description);
    }
  });

  it("allows ten registrations an hour from one client address, then answers 429 with Retry-After; another address is unaffected", async () => {
    const from = (address: string, name: string) =>
      json("/register", {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": address },
        body: JSON.stringify({
          client_name: name,
          application_type: "native",
          redirect_uris: [REDIRECT_URI],
          token_endpoint_auth_method: "none",
        }),
      });
    const address = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    for (let i = 0; i < 10; i++) expect((await from(address, `Burst ${i}`)).status).toBe(201);
    const refused = await from(address, "Burst 10");
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe("too_many_requests");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await from("192.0.2.44", "Another address")).status).toBe(201);
  });
});

describe("an MCP client authorized by an operator", () => {
  it("connects with the MCP SDK's OAuth flow, calls a tool, refreshes its token, and is cut off by a revocation", async () => {
    const operator = await signedInOperator("acme");
    const { oauth, client } = await authorizedClient("Flow test client", operator);

    // The token acts as acme's agent profile `support`: its tools, acme's data.
    const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "A1001" } });
    const envelope = envelopeOf(result);
    expect(envelope.outcome).toBe("success");
    expect((envelope.data as { order_id: string }).order_id).toBe("A1001");

    // A token the server does not know (expired, say) makes the SDK refresh and retry by itself.
    const first = oauth.saved;
    if (!first?.refresh_token) throw new Error("no refresh token was issued");
    oauth.saved = { ...first, access_token: "acme:unknowngrant:unknownsecret" };
    const again = await client.callTool({ name: "lookup_order", arguments: { order_id: "A1002" } });
    expect(envelopeOf(again).outcome).toBe("success");
    expect(oauth.saved?.access_token).not.toBe(first.access_token);
    expect(oauth.saved?.access_token).not.toBe("acme:unknowngrant:unknownsecret");
    expect(oauth.saved?.refresh_token).not.toBe(first.refresh_token);
    const current = oauth.saved?.access_token ?? "";
    expect((await initializeWith(current)).status).toBe(200);

    // The operator revokes the grant in the console; its tokens stop working at once.
    const listed = await operator.get("/console/oauth");
    expect(listed.status).toBe(200);
    expect(listed.html).toContain("Flow test client");
    const grantId = revokeIdOf(listed.html, "grants", "Flow test client");
    const revoked = await operator.post(`/console/oauth/grants/${grantId}/revoke`, { csrf: operator.csrf });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get("location")).toBe("/console/oauth?revoked=grant");

    const refused = await initializeWith(current);
    expect(refused.status).toBe(401);
    const challenge = refused.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain(`resource_metadata="${RESOURCE_METADATA}"`);
    expect(challenge).toContain('error="invalid_token"');
    expect(envelopeSchema().parse(JSON.parse(refused.text)).error?.code).toBe("permission_error");

    // Nor can the client refresh its way back in.
    const refresh = await tokenRequest({
      grant_type: "refresh_token",
      client_id: oauth.client?.client_id ?? "",
      refresh_token: oauth.saved?.refresh_token ?? "",
    });
    expect(refresh.status).toBe(400);
    expect(refresh.body.error).toBe("invalid_grant");
    await client.close();
  });

  it("needs PKCE: no challenge is refused, and a code redeems only with its own verifier", async () => {
    const registered = await register("PKCE test client");
    const clientId = String(registered.body.client_id);
    const operator = await signedInOperator("acme");

    // An authorization request without a code challenge goes back to the client as an error.
    const unchallenged = await operator.get(authorizationPath({ client_id: clientId }));
    expect(unchallenged.status).toBe(302);
    const refusal = new URL(unchallenged.headers.get("location") ?? "");
    expect(`${refusal.origin}${refusal.pathname}`).toBe(REDIRECT_URI);
    expect(refusal.searchParams.get("error")).toBe("invalid_request");
    expect(refusal.searchParams.get("state")).toBe("st-1");

    const auth = await manualAuthorization("PKCE test client 2", operator);
    const missing = await tokenRequest({
      grant_type: "authorization_code",
      client_id: auth.clientId,
      code: auth.code,
      redirect_uri: REDIRECT_URI,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/invalid_grant|invalid_request/);
    const wrong = await exchange({ ...auth, verifier: (await pkcePair()).verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    expect(wrong.body.access_token).toBeUndefined();

    const right = await exchange(await manualAuthorization("PKCE test client 3", operator));
    expect(right.status).toBe(200);
    expect(right.body).toMatchObject({ token_type: "bearer", resource: MCP_URL });
    expect(right.body.access_token).toEqual(expect.any(String));
  });

  it("refuses a token it never issued with 401 and the challenge, as an envelope", async () => {
    const { status, headers, body } = await request("/mcp", {
      method: "POST",
      headers: {
        authorization: "Bearer acme:nosuchgrant:nosuchsecret",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{}",
    });
    expect(status).toBe(401);
    expect(body.error?.code).toBe("permission_error");
    expect(headers.get("www-authenticate")).toContain(`resource_metadata="${RESOURCE_METADATA}"`);
    expect(headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("rotates the refresh token on every use, and a reused one revokes the grant: neither holder keeps access", async () => {
    const auth = await manualAuthorization("Refresh reuse client");
    const first = await exchange(auth);
    expect(first.status).toBe(200);
    const r0 = String(first.body.refresh_token);
    const refresh = (token: string) =>
      tokenRequest({ grant_type: "refresh_token", client_id: auth.clientId, refresh_token: token });
    const second = await refresh(r0);
    expect(second.status).toBe(200);
    const r1 = String(second.body.refresh_token);
    expect(r1).not.toBe(r0);

    // The exchanged token again: a thief (or a replay) is caught, and the grant ends for everyone.
    const reused = await refresh(r0);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    expect(String(reused.body.error_description)).toMatch(/already exchanged.*revoked/);
    expect((await refresh(r1)).status).toBe(400);
    expect((await initializeWith(String(second.body.access_token))).status).toBe(401);
  });

  it("refuses an expired access token with 401 and the challenge, so the client refreshes", async () => {
    const tokens = await exchange(await manualAuthorization("Expiry test client"));
    const accessToken = String(tokens.body.access_token);
    expect((await initializeWith(accessToken)).status).toBe(200);

    // Age the token where the provider keeps it: `token:<user>:<grant>:<hash>` with its expiry.
    const [userId, grantId] = accessToken.split(":");
    const { keys } = await env.OAUTH_KV.list({ prefix: `token:${userId}:${grantId}:` });
    expect(keys).toHaveLength(1);
    const key = keys[0]?.name ?? "";
    const record = await env.OAUTH_KV.get<Record<string, unknown>>(key, "json");
    await env.OAUTH_KV.put(key, JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 60 }));

    const expired = await initializeWith(accessToken);
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toContain(`resource_metadata="${RESOURCE_METADATA}"`);
    expect(expired.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(envelopeSchema().parse(JSON.parse(expired.text)).error?.code).toBe("permission_error");
  });

  it("keeps run tokens and agent keys working on /mcp beside OAuth", async () => {
    const run = await openRun("acme");
    expect((await initializeWith(run.token)).status).toBe(200);
    expect((await initializeWith("acme-agent-key")).status).toBe(200);
  });
});

describe("the consent page", () => {
  it("shows a client name's bidi override as an escape, flagged, so the operator reads the name as registered", async () => {
    const { page } = await consentPageFor("Claude\u202Eedualc Desktop");
    expect(page.status).toBe(200);
    expect(page.html).not.toContain("\u202E");
    expect(page.html).toContain("Claude⟨U+202E⟩edualc Desktop");
    expect(page.html).toMatch(/This page shows 1 hidden character as/);
  });

  it("sends an operator who is not signed in to sign in, and back to the request afterwards", async () => {
    const registered = await register("Sign-in test client");
    const { challenge } = await pkcePair();
    const path = authorizationPath({
      client_id: String(registered.body.client_id),
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const browser = new ConsoleClient();
    const first = await browser.get(path);
    expect(first.status).toBe(303);
    const signInPath = first.headers.get("location") ?? "";
    expect(signInPath).toBe(`/console/sign-in?return_to=${encodeURIComponent(path)}`);

    const form = await browser.get(signInPath);
    expect(form.html).toContain("An MCP client asks for access");
    const signedIn = await browser.post("/console/sign-in", {
      csrf: browser.csrf,
      key: "acme-operator-key",
      return_to: path,
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe(path);
    expect((await browser.get(path)).status).toBe(200);
  });

  it("never sends a signed-in operator off this origin after sign-in", async () => {
    for (const returnTo of ["//evil.example/x", "https://evil.example/", "/\\evil.example", "/v1/runs"]) {
      const browser = new ConsoleClient();
      const form = await browser.get(`/console/sign-in?return_to=${encodeURIComponent(returnTo)}`);
      expect(form.html, returnTo).not.toContain('name="return_to"');
      const response = await browser.post("/console/sign-in", {
        csrf: browser.csrf,
        key: "acme-operator-key",
        return_to: returnTo,
      });
      expect(response.headers.get("location"), returnTo).toBe("/console");
    }
  });

  it("shows the client's name and redirect URI and the tenant's agent profiles with their limits", async () => {
    const { page } = await consentPageFor("Consent <b>page</b> client");
    expect(page.status).toBe(200);
    expect(page.html).toContain("Consent &lt;b&gt;page&lt;/b&gt; client");
    expect(page.html).not.toContain("<b>page</b>");
    expect(page.html).toContain(REDIRECT_URI);
    expect(page.html).toContain("127.0.0.1");
    expect(page.html).toContain('value="support"');
    expect(page.html).toContain("60 calls");
    expect(page.html).toMatch(/name="csrf" value="[^"]+"/);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    // The answer to the form redirects to the client: the policy lets the browser follow it there.
    expect(csp).toContain("form-action 'self' http://127.0.0.1:33418");
    expect(page.setCookies.some((cookie) => cookie.startsWith("__Host-oauth-consent"))).toBe(true);
  });

  it("refuses an unknown client and a redirect URI the client did not register, without redirecting", async () => {
    const operator = await signedInOperator("acme");
    const { challenge } = await pkcePair();
    const pkce = { code_challenge: challenge, code_challenge_method: "S256" };
    const unknown = await operator.get(authorizationPath({ client_id: "nosuchclient", ...pkce }));
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("location")).toBeNull();
    expect(unknown.html).toContain("not registered here");

    const registered = await register("Redirect test client");
    const mismatched = await operator.get(
      `/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: String(registered.body.client_id),
        redirect_uri: "https://evil.example/callback",
        state: "s",
        ...pkce,
      })}`,
    );
    expect(mismatched.status).toBe(400);
    expect(mismatched.headers.get("location")).toBeNull();
    expect(mismatched.html).toContain("not one the application registered");
  });

  it("refuses a consent form without the session's CSRF token, and a handle used twice", async () => {
    const { operator, page } = await consentPageFor("CSRF test client");
    const form = { handle: handleOf(page.html), profile: "support", decision: "approve" };
    expect((await operator.post("/authorize", { ...form, csrf: "x".repeat(43) })).status).toBe(403);
    expect((await operator.post("/authorize", { ...form, csrf: operator.csrf })).status).toBe(302);
    const replayed = await operator.post("/authorize", { ...form, csrf: operator.csrf });
    expect(replayed.status).toBe(409);
    expect(replayed.headers.get("location")).toBeNull();
  });

  it("sends a denial back to the client as access_denied, and grants nothing", async () => {
    const { operator, page } = await consentPageFor("Denied test client");
    const denied = await operator.post("/authorize", {
      csrf: operator.csrf,
      handle: handleOf(page.html),
      decision: "deny",
    });
    expect(denied.status).toBe(302);
    const location = new URL(denied.headers.get("location") ?? "");
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(location.searchParams.get("state")).toBe("st-1");
    expect(location.searchParams.get("code")).toBeNull();
    expect((await operator.get("/console/oauth")).html).not.toContain("Denied test client");
  });
});

describe("grants across tenants", () => {
  it("another tenant's operator neither sees nor revokes acme's grants", async () => {
    const acme = await signedInOperator("acme");
    const tokens = await exchange(await manualAuthorization("Acme isolation client", acme));
    const accessToken = String(tokens.body.access_token);
    const listed = (await acme.get("/console/oauth")).html;
    const grantId = revokeIdOf(listed, "grants", "Acme isolation client");
    const clientId = revokeIdOf(listed, "clients", "Acme isolation client");

    const globex = await signedInOperator("globex");
    const seen = await globex.get("/console/oauth");
    expect(seen.status).toBe(200);
    expect(seen.html).not.toContain("Acme isolation client");
    expect(grantIdsOn(seen.html)).not.toContain(grantId);

    const attempt = await globex.post(`/console/oauth/grants/${grantId}/revoke`, { csrf: globex.csrf });
    expect(attempt.status).toBe(404);
    const disconnect = await globex.post(`/console/oauth/clients/${clientId}/revoke`, { csrf: globex.csrf });
    expect(disconnect.status).toBe(404);
    expect((await initializeWith(accessToken)).status).toBe(200);

    // Acme's own operator can disconnect the client, which revokes the grant.
    const disconnected = await acme.post(`/console/oauth/clients/${clientId}/revoke`, { csrf: acme.csrf });
    expect(disconnected.status).toBe(303);
    expect(disconnected.headers.get("location")).toBe("/console/oauth?revoked=client&count=1");
    expect((await initializeWith(accessToken)).status).toBe(401);
  });

  it("a globex grant admits the client as globex, with globex's data only", async () => {
    const globex = await signedInOperator("globex");
    const { client } = await authorizedClient("Globex flow client", globex);
    const own = envelopeOf(await client.callTool({ name: "lookup_order", arguments: { order_id: "B2001" } }));
    expect(own.outcome).toBe("success");
    const other = envelopeOf(
      await client.callTool({ name: "lookup_order", arguments: { order_id: "A1001" } }),
    );
    expect(other.outcome).not.toBe("success");
    await client.close();
  });
});
