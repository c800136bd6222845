import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EGRESS_THROTTLE, fetchDocument, KEEP_FAILED_MS } from "../../src/egress/remembered-fetch";
import { signedInOperator } from "./console-client";
import { MCP_URL } from "./mcp-client";
import { json, pkcePair, REDIRECT_URI } from "./oauth-client";

/**
 * The egress guard on the fetch of a client's metadata document (MCP 2026-07-28, client_id is an
 * https URL): an unauthenticated token request must not make the proxy reach a loopback, private,
 * link-local or own address under any spelling, follow a redirect there, or fetch once per request.
 *
 * As in oauth-cimd.test.ts, the worker runs in this isolate and the global `fetch` is replaced for
 * the documents' host, `https://client.test`: a document is served in process and nothing leaves
 * the machine. Every fetch the worker makes to anything is recorded with its redirect mode, so a test
 * sees exactly what went out (a refused target: nothing at all).
 */

const DOCUMENT_ORIGIN = "https://client.test";

const documents = new Map<string, () => Response>();
/** Every fetch that reached the network layer (the mock), by URL, with its redirect mode. */
const sent: Array<{ url: string; redirect: string | undefined }> = [];

beforeAll(() => {
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const redirect = init?.redirect ?? (input instanceof Request ? input.redirect : undefined);
    if (!url.startsWith(`${DOCUMENT_ORIGIN}/`)) {
      // Nothing but the documents' host may be reached; a request elsewhere is recorded and refused
      // the way a closed port would be, never sent.
      sent.push({ url, redirect });
      return Promise.reject(new TypeError("connection refused"));
    }
    sent.push({ url, redirect });
    const serve = documents.get(url);
    return Promise.resolve(serve ? serve() : new Response("not found", { status: 404 }));
  });
});

afterAll(() => {
  vi.restoreAllMocks();
});

let count = 0;
const fresh = (name: string) => `${DOCUMENT_ORIGIN}/oauth/${name}-${++count}-${crypto.randomUUID()}.json`;

/** A valid document for a public client at `clientId`. */
function publishDocument(clientId: string): string {
  const body = JSON.stringify({
    client_id: clientId,
    client_name: "Egress test client",
    redirect_uris: [REDIRECT_URI],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  });
  documents.set(clientId, () => new Response(body, { headers: { "content-type": "application/json" } }));
  return clientId;
}

function redirecting(from: string, to: string, status = 302): string {
  documents.set(from, () => new Response(null, { status, headers: { location: to } }));
  return from;
}

let sources = 0;
/** A fresh source address per test, so one test's throttle never refuses another's. */
const freshSource = () => `203.0.113.${++sources}`;

/** An unauthenticated code exchange naming `clientId`, from `source`. */
function exchange(clientId: string, source: string) {
  return json("/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": source },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: clientId,
      code: "acme:nosuchgrant:nosuchsecret",
      redirect_uri: REDIRECT_URI,
      code_verifier: "v".repeat(43),
    }).toString(),
  });
}

/** What a token request naming an unusable document is answered: one answer for every failure. */
const UNUSABLE = { status: 401, body: { error: "invalid_client", error_description: "Client not found" } };

/** An authorization request's query for the client, as an MCP client starts one. */
async function authorizeQuery(clientId: string): Promise<URLSearchParams> {
  const { challenge } = await pkcePair();
  return new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st-egress",
    resource: MCP_URL,
  });
}

function sentSince(mark: number) {
  return sent.slice(mark);
}

describe("the client metadata document's fetch", () => {
  it("refuses every local spelling of a target without sending anything, answering as for any unusable document", async () => {
    const targets = [
      "https://127.0.0.1/oauth/client.json",
      "https://127.0.0.1:8788/oauth/client.json",
      "https://localhost/oauth/client.json",
      "https://app.localhost/oauth/client.json",
      "https://2130706433/oauth/client.json",
      "https://0x7f.1/oauth/client.json",
      "https://0177.0.0.1/oauth/client.json",
      "https://127.1/oauth/client.json",
      "https://[::ffff:127.0.0.1]/oauth/client.json",
      "https://[::ffff:7f00:1]/oauth/client.json",
      "https://[::1]/oauth/client.json",
      "https://169.254.169.254/latest/meta-data/iam",
      "https://10.0.0.5/oauth/client.json",
      "https://0.0.0.0/oauth/client.json",
      "https://proxy.test/v1/operator/runs",
      "http://client.test/oauth/client.json",
    ];
    const source = freshSource();
    const mark = sent.length;
    for (const target of targets) {
      const answer = await exchange(target, source);
      expect({ status: answer.status, body: answer.body }, target).toEqual(UNUSABLE);
    }
    expect(sentSince(mark)).toEqual([]);
  });

  it("checks each redirect's target and refuses one to loopback or to the proxy's own API, fetching only the first hop", async () => {
    const source = freshSource();
    const cases = [
      redirecting(fresh("to-metadata"), "http://127.0.0.1:8787/latest/meta-data/"),
      redirecting(fresh("to-loopback"), "https://127.0.0.1/oauth/client.json", 307),
      redirecting(fresh("to-decimal"), "https://2130706433/oauth/client.json", 301),
      redirecting(fresh("to-own-api"), "https://proxy.test/v1/operator/runs", 307),
    ];
    for (const clientId of cases) {
      const mark = sent.length;
      const answer = await exchange(clientId, source);
      expect({ status: answer.status, body: answer.body }, clientId).toEqual(UNUSABLE);
      // Only the first hop went out, and with redirects left to the guard.
      expect(sentSince(mark), clientId).toEqual([{ url: clientId, redirect: "manual" }]);
    }
  });

  it("follows a redirect to another public address, checking and fetching each hop", async () => {
    const target = publishDocument(fresh("moved"));
    const clientId = redirecting(fresh("old-address"), target);
    // The document names its own URL, not the old one: the provider refuses it, after both hops.
    const mark = sent.length;
    await exchange(clientId, freshSource());
    expect(sentSince(mark)).toEqual([
      { url: clientId, redirect: "manual" },
      { url: target, redirect: "manual" },
    ]);
  });

  it("follows at most 3 redirects, each fetched, and refuses a fourth without sending it", async () => {
    const hops = [
      fresh("hop-0"),
      fresh("hop-1"),
      fresh("hop-2"),
      fresh("hop-3"),
      publishDocument(fresh("hop-4")),
    ];
    for (const [index, hop] of hops.slice(0, -1).entries()) redirecting(hop, hops[index + 1] ?? "");
    const mark = sent.length;
    const answer = await exchange(hops[0] ?? "", freshSource());
    expect({ status: answer.status, body: answer.body }).toEqual(UNUSABLE);
    expect(sentSince(mark).map(({ url }) => url)).toEqual(hops.slice(0, 4));
  });

  it("stops reading a document past 64 KiB, whatever its headers say, and answers as for any failure", async () => {
    const clientId = fresh("endless");
    let pulled = 0;
    documents.set(clientId, () => {
      const chunk = new Uint8Array(1024).fill(32);
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += 1;
          if (pulled > 1_000) controller.close();
          else controller.enqueue(chunk);
        },
      });
      return new Response(body, { headers: { "content-type": "application/json" } });
    });
    const answer = await exchange(clientId, freshSource());
    expect({ status: answer.status, body: answer.body }).toEqual(UNUSABLE);
    expect(pulled).toBeLessThan(100);
  });

  it("answers a second request for a failed document from memory, with no second fetch", async () => {
    const clientId = fresh("missing");
    const source = freshSource();
    const mark = sent.length;
    const first = await exchange(clientId, source);
    const second = await exchange(clientId, source);
    expect({ status: first.status, body: first.body }).toEqual(UNUSABLE);
    expect({ status: second.status, body: second.body }).toEqual(UNUSABLE);
    expect(sentSince(mark)).toEqual([{ url: clientId, redirect: "manual" }]);
  });

  it("fetches a good document once for the consent page and the token request that follow", async () => {
    const clientId = publishDocument(fresh("good"));
    const operator = await signedInOperator("acme");
    const mark = sent.length;
    const page = await operator.get(`/authorize?${await authorizeQuery(clientId)}`);
    expect(page.status, page.html.slice(0, 300)).toBe(200);
    await exchange(clientId, freshSource());
    expect(sentSince(mark)).toEqual([{ url: clientId, redirect: "manual" }]);
  });

  it("shows the consent page's refusal for a document that redirects to loopback, the library's own lookup guarded too", async () => {
    const clientId = redirecting(fresh("consent-redirect"), "https://127.0.0.1/oauth/client.json");
    const operator = await signedInOperator("acme");
    const mark = sent.length;
    const page = await operator.get(`/authorize?${await authorizeQuery(clientId)}`);
    expect(page.status).toBe(400);
    expect(page.html).toContain("the document could not be fetched");
    expect(sentSince(mark)).toEqual([{ url: clientId, redirect: "manual" }]);
  });

  it("refuses the eleventh document fetch for one address within a minute, 429 with Retry-After, without fetching", async () => {
    const source = freshSource();
    const mark = sent.length;
    for (let index = 0; index < 10; index++) {
      const answer = await exchange(fresh(`flood-${index}`), source);
      expect(answer.status, `request ${index + 1}`).toBe(401);
    }
    expect(sentSince(mark)).toHaveLength(10);
    const refused = await exchange(fresh("flood-11"), source);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe("temporarily_unavailable");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(sentSince(mark)).toHaveLength(10);
    // Another address is not held up by this one.
    const other = await exchange(fresh("other-source"), freshSource());
    expect(other.status).toBe(401);
    expect(sentSince(mark)).toHaveLength(11);
  });

  it("fetches one document at most 5 times a minute wherever the requests land, then refuses without fetching", async () => {
    const clientId = fresh("hammered");
    const mark = sent.length;
    // Each call's clock is past the isolate's memory of the last failure, as in a fresh isolate:
    // only the document's bucket, shared by all isolates, stands between the requests and fetches.
    const start = Date.now();
    const answers = [];
    for (let index = 0; index <= EGRESS_THROTTLE.per_target; index++) {
      const now = start + (index + 1) * (KEEP_FAILED_MS + 1);
      answers.push(await fetchDocument(env, clientId, { source: null, ownHosts: ["proxy.test"], now }));
    }
    expect(answers.slice(0, EGRESS_THROTTLE.per_target).map((answer) => answer.ok || answer.kind)).toEqual(
      new Array(EGRESS_THROTTLE.per_target).fill("failed"),
    );
    expect(answers.at(-1)).toMatchObject({ ok: false, kind: "throttled" });
    expect(sentSince(mark)).toHaveLength(EGRESS_THROTTLE.per_target);
  });
});
