import { env } from "cloudflare:workers";
import { Client, UnauthorizedError } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ConsoleClient, signedInOperator } from "./console-client";
import { envelopeOf, MCP_URL, ORIGIN } from "./mcp-client";
import { json, MemoryOAuthClient, pkcePair, REDIRECT_URI, transportFor } from "./oauth-client";

/**
 * The authorization rules of MCP 2026-07-28: clients named by a Client ID Metadata Document,
 * the RFC 9207 `iss` in authorization responses, and `application_type` at dynamic registration.
 *
 * Serving the metadata documents: the provider library fetches a client's document with the global
 * `fetch` and offers no option to pass another fetch or to accept an http (loopback) client_id, so
 * a document cannot be served from a local worker by URL. The tests run in the worker's own
 * isolate, so they replace the global `fetch` for the documents' host, `https://client.test`, and
 * pass everything else through: the document is served in process, nothing leaves the machine, and
 * the library's own fetch path (its size and time bounds, its validation) runs unchanged.
 */

const DOCUMENT_ORIGIN = "https://client.test";

/** What the documents' host answers, by URL; a URL not listed answers 404. */
const documents = new Map<string, () => Response>();
const realFetch = globalThis.fetch;
/** Every URL the worker fetched from the documents' host. */
const fetchedDocuments: string[] = [];

beforeAll(() => {
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith(`${DOCUMENT_ORIGIN}/`)) return realFetch(input, init);
    fetchedDocuments.push(url);
    const serve = documents.get(url);
    return Promise.resolve(serve ? serve() : new Response("not found", { status: 404 }));
  });
});

afterAll(() => {
  vi.restoreAllMocks();
});

let documentCount = 0;

/** Publishes a document at a fresh URL (so no cached copy of an earlier test answers) and returns the URL. */
function publish(body: (clientId: string) => string, headers: Record<string, string> = {}): string {
  documentCount += 1;
  const clientId = `${DOCUMENT_ORIGIN}/oauth/client-${documentCount}-${crypto.randomUUID()}.json`;
  const text = body(clientId);
  documents.set(
    clientId,
    () =>
      new Response(text, {
        headers: { "content-type": "application/json", "cache-control": "no-store", ...headers },
      }),
  );
  return clientId;
}

/** A valid document for a public desktop client, with `overrides` over its fields. */
function clientDocument(name: string, overrides: Record<string, unknown> = {}) {
  return (clientId: string) =>
    JSON.stringify({
      client_id: clientId,
      client_name: name,
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...overrides,
    });
}

function authorizationPath(clientId: string, challenge: string, redirectUri = REDIRECT_URI): string {
  const params = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st-cimd",
    resource: MCP_URL,
  });
  return `/authorize?${params}`;
}

/** The consent form's hidden handle. */
function handleOf(html: string): string {
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1];
  if (!handle) throw new Error(`no consent handle on the page: ${html.slice(0, 300)}`);
  return handle;
}

/** An operator opens the authorization URL, picks `support` and allows: the redirect to the client. */
async function consent(operator: ConsoleClient, path: string) {
  const page = await operator.get(path);
  expect(page.status, page.html.slice(0, 500)).toBe(200);
  const answer = await operator.post("/authorize", {
    csrf: operator.csrf,
    handle: handleOf(page.html),
    profile: "support",
    decision: "approve",
  });
  expect(answer.status, answer.html.slice(0, 500)).toBe(302);
  return { page, location: new URL(answer.headers.get("location") ?? "") };
}

/** The client ids of the grants the provider stores for acme (`grant:<tenant>:<id>` in OAUTH_KV). */
async function acmeGrantClients(): Promise<string[]> {
  const { keys } = await env.OAUTH_KV.list({ prefix: "grant:acme:" });
  const grants = await Promise.all(
    keys.map((key) => env.OAUTH_KV.get<{ clientId: string }>(key.name, "json")),
  );
  return grants.map((grant) => grant?.clientId ?? "");
}

describe("authorization-server metadata", () => {
  it("says metadata documents, the iss parameter and dynamic registration are supported", async () => {
    const { status, body } = await json("/.well-known/oauth-authorization-server");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      issuer: ORIGIN,
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
      registration_endpoint: `${ORIGIN}/register`,
      code_challenge_methods_supported: ["S256"],
    });
    expect(body.token_endpoint_auth_methods_supported).toContain("none");
  });
});

describe("a client named by its metadata document", () => {
  it("completes authorization code + PKCE through the MCP SDK without registering, and lists the tools with its token", async () => {
    const clientId = publish(clientDocument("CIMD flow client"));
    const oauth = new MemoryOAuthClient("CIMD flow client", { clientMetadataUrl: clientId });
    const first = new Client({ name: "oauth-cimd-test", version: "1.0.0" });
    const transport = transportFor(oauth);
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    // The SDK read `client_id_metadata_document_supported` and used its URL: no registration.
    expect(oauth.client?.client_id).toBe(clientId);
    const authorizationUrl = oauth.authorizationUrl ?? new URL(ORIGIN);
    expect(authorizationUrl.searchParams.get("client_id")).toBe(clientId);

    const operator = await signedInOperator("acme");
    const { page, location } = await consent(
      operator,
      `${authorizationUrl.pathname}${authorizationUrl.search}`,
    );
    expect(page.html).toContain("CIMD flow client");
    expect(page.html).toContain("client.test");
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get("iss")).toBe(ORIGIN);
    expect(fetchedDocuments).toContain(clientId);

    await transport.finishAuth(location.searchParams);
    expect(oauth.saved?.access_token).toBeTruthy();
    expect(await acmeGrantClients()).toContain(clientId);

    const client = new Client({ name: "oauth-cimd-test", version: "1.0.0" });
    await client.connect(transportFor(oauth));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("lookup_order");
    const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "A1001" } });
    expect(envelopeOf(result).outcome).toBe("success");
    await client.close();

    // The same grant on the current revision: no session, a run started by start_task and named by
    // its run handle on every call.
    const current = new Client(
      { name: "oauth-cimd-current", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await current.connect(transportFor(oauth));
    const started = await current.callTool({ name: "start_task", arguments: {} });
    expect(started.isError, JSON.stringify(started.content)).not.toBe(true);
    const { run_handle } = started.structuredContent as { run_handle: string };
    const read = await current.callTool({
      name: "lookup_order",
      arguments: { order_id: "A1001", run_handle },
    });
    expect(envelopeOf(read).outcome).toBe("success");
    await current.close();
    // Nothing was registered: the provider keeps no client record for a document's URL.
    expect(await env.OAUTH_KV.get(`client:${clientId}`)).toBeNull();
  });

  it("is refused, with nothing granted and no redirect, when its document does not list the redirect URI, is over 5 KB, or is not JSON", async () => {
    const cases: Array<[string, string, RegExp]> = [
      [
        "redirect URI not listed",
        publish(
          clientDocument("Other redirect client", { redirect_uris: ["http://127.0.0.1:9999/elsewhere"] }),
        ),
        /not one the application registered/,
      ],
      [
        "over 5 KB",
        publish(clientDocument("Huge client", { client_uri: `https://client.test/${"x".repeat(6_000)}` })),
        /metadata document at https:\/\/client\.test\/.*could not be used: .*size limit of 5120 bytes/,
      ],
      [
        "not JSON",
        publish(() => "<html>not a client</html>", { "content-type": "text/html" }),
        /metadata document at https:\/\/client\.test\/.*could not be used: Client metadata response is not valid JSON/,
      ],
      [
        "not found",
        `${DOCUMENT_ORIGIN}/oauth/missing-${crypto.randomUUID()}.json`,
        // Every failure to fetch reads the same, so an answer never tells an open port from a closed one.
        /could not be used: the document could not be fetched \(the proxy does not say whether/,
      ],
    ];
    const operator = await signedInOperator("acme");
    const { challenge, verifier } = await pkcePair();
    for (const [name, clientId, message] of cases) {
      const page = await operator.get(authorizationPath(clientId, challenge));
      expect(page.status, name).toBe(400);
      expect(page.headers.get("location"), name).toBeNull();
      expect(page.html, name).not.toContain('name="handle"');
      expect(page.html.replaceAll("&#39;", "'"), name).toMatch(message);

      // Nor does the token endpoint take the client.
      const token = await json("/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          client_id: clientId,
          code: "acme:nosuchgrant:nosuchsecret",
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
        }).toString(),
      });
      expect(token.status, name).toBeGreaterThanOrEqual(400);
      expect(token.body.access_token, name).toBeUndefined();
      expect(await acmeGrantClients(), name).not.toContain(clientId);
    }
  });
});

describe("the authorization response", () => {
  it("carries iss (RFC 9207) with the code and the state, and on a denial", async () => {
    const operator = await signedInOperator("acme");
    const { challenge } = await pkcePair();
    const { location } = await consent(
      operator,
      authorizationPath(publish(clientDocument("Issuer test client")), challenge),
    );
    expect(location.searchParams.get("code")).toBeTruthy();
    expect(location.searchParams.get("state")).toBe("st-cimd");
    expect(location.searchParams.get("iss")).toBe(ORIGIN);

    const page = await operator.get(
      authorizationPath(publish(clientDocument("Denied issuer client")), challenge),
    );
    const denied = await operator.post("/authorize", {
      csrf: operator.csrf,
      handle: handleOf(page.html),
      decision: "deny",
    });
    expect(denied.status).toBe(302);
    const refusal = new URL(denied.headers.get("location") ?? "");
    expect(refusal.searchParams.get("error")).toBe("access_denied");
    expect(refusal.searchParams.get("iss")).toBe(ORIGIN);
  });
});

describe("dynamic registration and application_type", () => {
  const register = (metadata: Record<string, unknown>) =>
    json("/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Application type client",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        ...metadata,
      }),
    });

  it("refuses a web client whose redirect URI is http://localhost, and says to register as native; a client that declares no type keeps the 2025 rule", async () => {
    const { status, body } = await register({
      application_type: "web",
      redirect_uris: ["http://localhost:33418/callback"],
    });
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_redirect_uri");
    expect(String(body.error_description)).toMatch(/^redirect_uris\[0\] uses http, not https\./);
    expect(String(body.error_description)).toContain('application_type "native"');
    const undeclared = await register({ redirect_uris: ["http://localhost:33418/callback"] });
    expect(undeclared.status).toBe(201);
    const undeclaredRemote = await register({ redirect_uris: ["http://app.example/callback"] });
    expect(undeclaredRemote.status).toBe(400);
    const loopbackHttps = await register({
      application_type: "web",
      redirect_uris: ["https://127.0.0.1/callback"],
    });
    expect(loopbackHttps.status).toBe(400);
    expect(String(loopbackHttps.body.error_description)).toMatch(/is on this machine/);
  });

  it("accepts a native client on loopback http and a web client on https", async () => {
    const native = await register({ application_type: "native", redirect_uris: [REDIRECT_URI] });
    expect(native.status).toBe(201);
    expect(native.body.redirect_uris).toEqual([REDIRECT_URI]);
    const web = await register({ application_type: "web", redirect_uris: ["https://app.example/callback"] });
    expect(web.status).toBe(201);
  });

  it("refuses a native client on remote http, and an application_type it does not know", async () => {
    const remote = await register({ application_type: "native", redirect_uris: ["http://app.example/cb"] });
    expect(remote.status).toBe(400);
    expect(remote.body.error).toBe("invalid_redirect_uri");
    expect(String(remote.body.error_description)).toMatch(/http on a host other than loopback/);
    const unknown = await register({ application_type: "desktop", redirect_uris: [REDIRECT_URI] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe("invalid_client_metadata");
    expect(String(unknown.body.error_description)).toMatch(/application_type: "desktop"/);
  });
});
