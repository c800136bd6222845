import { env } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { ARTICLE_INJECTION_TEXT } from "../../sandbox/src/helpdesk/seed";
import { issueUpstreamCredential } from "../../src/upstream/credential";
import { sandbox, sandboxRequests } from "./helpers";
import { configuredSigningKeys } from "./upstream-credentials";

/**
 * The sandbox's helpdesk, a remote MCP server at /mcp, driven straight at the sandbox with a
 * credential minted for each request (as the proxy's are, audience `helpdesk`) and checked against
 * its admin records: effects applied, notes stored, sessions remembered. Writes go to initech, the
 * load-test tenant, except where a test compares tenants.
 */

type Tenant = "acme" | "globex" | "initech";
const URL_BASE = "https://upstream.internal";
const MCP_URL = `${URL_BASE}/mcp`;

/** A fetch that signs each request for `tenant`, the way the proxy will. */
function signedFetch(tenant: Tenant, run = crypto.randomUUID()) {
  return async (url: string | URL, init: RequestInit = {}): Promise<Response> => {
    const target = new URL(url);
    const method = (init.method ?? "GET").toUpperCase();
    const body = typeof init.body === "string" ? init.body : null;
    const headers = new Headers(init.headers);
    const credential = await issueUpstreamCredential(
      {
        tenant,
        run,
        tool: "helpdesk",
        exp: Date.now() + 60_000,
        request: {
          method,
          target: `${target.pathname}${target.search}`,
          body,
          idempotency_key: headers.get("idempotency-key"),
        },
      },
      configuredSigningKeys(),
    );
    headers.set("authorization", `Bearer ${credential}`);
    return env.ORDERS_API.fetch(target.toString(), { ...init, method, headers });
  };
}

interface Rpc {
  status: number;
  headers: Headers;
  text: string;
  json: { result?: Record<string, unknown>; error?: { code: number; message: string } } | null;
}

let nextId = 1;

/** One raw JSON-RPC POST, for what an SDK client would not send or would hide. */
async function rpc(
  tenant: Tenant,
  method: string,
  params: Record<string, unknown> | undefined,
  headers: Record<string, string> = {},
  run?: string,
): Promise<Rpc> {
  const response = await signedFetch(tenant, run)(MCP_URL, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, ...(params ? { params } : {}) }),
  });
  const text = await response.text();
  let json: Rpc["json"] = null;
  try {
    json = JSON.parse(text) as Rpc["json"];
  } catch {
    json = null;
  }
  return { status: response.status, headers: response.headers, text, json };
}

const INIT_PARAMS = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "helpdesk-test", version: "1.0.0" },
};

/** A 2025-era session by hand: initialize, then the id every later request carries. */
async function openSession(tenant: Tenant): Promise<Record<string, string>> {
  const init = await rpc(tenant, "initialize", INIT_PARAMS);
  expect(init.status).toBe(200);
  const sessionId = init.headers.get("mcp-session-id");
  expect(sessionId).toBeTruthy();
  return { "mcp-session-id": sessionId ?? "", "mcp-protocol-version": "2025-06-18" };
}

async function connect(tenant: Tenant): Promise<Client> {
  const client = new Client({ name: "helpdesk-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: signedFetch(tenant) }));
  return client;
}

function effects(tenant: Tenant, tool: string) {
  return sandbox<{ effects: Array<{ idempotency_key: string | null; target: string }>; count: number }>(
    `/_admin/helpdesk/effects?tenant=${tenant}&tool=${tool}`,
  );
}

const KEY_META = "io.edge-tool-proxy/idempotency-key";

afterEach(async () => {
  await sandbox("/_admin/helpdesk/drift", { method: "DELETE" });
});

describe("the helpdesk over MCP (2025 revisions, with sessions)", () => {
  it("initializes with the SDK client and lists its tools with schemas and annotations", async () => {
    const client = await connect("acme");
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual([
      "add_ticket_note",
      "get_conversation",
      "get_ticket_notes",
      "purge_conversation",
      "search_articles",
    ]);
    expect(byName.get("search_articles")?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get("search_articles")?.outputSchema?.properties).toHaveProperty("results");
    expect(byName.get("add_ticket_note")?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
    });
    expect(byName.get("purge_conversation")?.annotations?.destructiveHint).toBe(true);
    await client.close();
  });

  it("search_articles answers structured results, the community article's planted text included", async () => {
    const client = await connect("acme");
    const found = await client.callTool({ name: "search_articles", arguments: { query: "password reset" } });
    const structured = found.structuredContent as { results: Array<{ article_id: string; snippet: string }> };
    expect(structured.results[0]?.article_id).toBe("kb_1_password");
    expect(structured.results[0]?.snippet).toContain(ARTICLE_INJECTION_TEXT.slice(0, 100));
    expect(found.content).toEqual([{ type: "text", text: JSON.stringify(structured) }]);
    await client.close();
  });

  it("add_ticket_note with the same key applies once and replays the first note", async () => {
    const client = await connect("initech");
    const key = `note-${crypto.randomUUID()}`;
    const call = () =>
      client.callTool({
        name: "add_ticket_note",
        arguments: { ticket_id: "HD-3001", body: "Called the customer back." },
        _meta: { [KEY_META]: key },
      });
    const first = await call();
    const second = await call();
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(second._meta?.["io.edge-tool-proxy/idempotent-replayed"]).toBe(true);
    const applied = (await effects("initech", "add_ticket_note")).effects.filter(
      (e) => e.idempotency_key === key,
    );
    expect(applied).toHaveLength(1);
    const { notes } = await sandbox<{ notes: Array<{ note_id: string }> }>(
      `/_admin/helpdesk/notes?tenant=initech&idempotency_key=${key}`,
    );
    expect(notes.map((n) => n.note_id)).toEqual([(first.structuredContent as { note_id: string }).note_id]);
    const readBack = await client.callTool({ name: "get_ticket_notes", arguments: { ticket_id: "HD-3001" } });
    expect(JSON.stringify(readBack.structuredContent)).toContain(notes[0]?.note_id);
    await client.close();
  });

  it("a key reused with other arguments is refused as a result, and applies nothing", async () => {
    const headers = await openSession("initech");
    const key = `note-${crypto.randomUUID()}`;
    const note = (body: string) =>
      rpc(
        "initech",
        "tools/call",
        { name: "add_ticket_note", arguments: { ticket_id: "HD-3002", body } },
        {
          ...headers,
          "idempotency-key": key,
        },
      );
    expect((await note("first")).json?.result?.isError).toBeUndefined();
    const reused = await note("second");
    expect(reused.json?.result?.isError).toBe(true);
    expect(reused.text).toContain("idempotency_key_reused");
    const applied = (await effects("initech", "add_ticket_note")).effects.filter(
      (e) => e.idempotency_key === key,
    );
    expect(applied).toHaveLength(1);
  });

  it("purge_conversation deletes the messages once; a second purge is refused", async () => {
    const client = await connect("initech");
    const purge = () =>
      client.callTool({
        name: "purge_conversation",
        arguments: { conversation_id: "CV-3003", reason: "GDPR request" },
      });
    const first = await purge();
    expect(first.structuredContent).toMatchObject({ status: "purged", purged_messages: 1 });
    const conversation = await client.callTool({
      name: "get_conversation",
      arguments: { conversation_id: "CV-3003" },
    });
    expect(conversation.structuredContent).toMatchObject({ status: "purged", messages: [] });
    const again = await purge();
    expect(again.isError).toBe(true);
    expect(JSON.stringify(again.content)).toContain("conversation_purged");
    expect(
      (await effects("initech", "purge_conversation")).effects.filter((e) => e.target === "CV-3003"),
    ).toHaveLength(1);
    await client.close();
  });

  it("an unknown or forgotten session id is a 404; DELETE ends a session", async () => {
    expect((await rpc("acme", "tools/list", undefined, { "mcp-session-id": "never-issued" })).status).toBe(
      404,
    );
    const headers = await openSession("acme");
    expect((await rpc("acme", "tools/list", undefined, headers)).status).toBe(200);
    // Another tenant cannot use it.
    expect((await rpc("globex", "tools/list", undefined, headers)).status).toBe(404);
    const { forgotten } = await sandbox<{ forgotten: number }>(
      `/_admin/helpdesk/sessions?session_id=${headers["mcp-session-id"]}`,
      { method: "DELETE" },
    );
    expect(forgotten).toBe(1);
    const gone = await rpc("acme", "tools/list", undefined, headers);
    expect(gone.status).toBe(404);
    expect(gone.json?.error?.code).toBe(-32001);
    const again = await openSession("acme");
    const ended = await signedFetch("acme")(MCP_URL, { method: "DELETE", headers: again });
    expect(ended.status).toBe(200);
    expect((await rpc("acme", "tools/list", undefined, again)).status).toBe(404);
  });

  it("a request without a session id is a 400; one without a valid credential a 401", async () => {
    expect((await rpc("acme", "tools/list", undefined)).status).toBe(400);
    const unsigned = await env.ORDERS_API.fetch(MCP_URL, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS }),
    });
    expect(unsigned.status).toBe(401);
  });
});

describe("the helpdesk over MCP (2026-07-28, sessionless)", () => {
  it("serves a client pinned to the revision: no session, the same tools, the list's ttlMs", async () => {
    const client = new Client(
      { name: "helpdesk-test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: signedFetch("initech") });
    await client.connect(transport);
    expect(transport.sessionId).toBeUndefined();
    const listed = await client.listTools();
    expect(listed.tools).toHaveLength(5);
    expect((listed as { ttlMs?: number }).ttlMs).toBe(60_000);
    const key = `modern-${crypto.randomUUID()}`;
    const call = () =>
      client.callTool({
        name: "add_ticket_note",
        arguments: { ticket_id: "HD-3002", body: "modern note" },
        _meta: { [KEY_META]: key },
      });
    await call();
    await call();
    expect(
      (await effects("initech", "add_ticket_note")).effects.filter((e) => e.idempotency_key === key),
    ).toHaveLength(1);
    await client.close();
  });
});

describe("tenant separation", () => {
  it("a tenant reads and writes only its own tickets and conversations", async () => {
    const globex = await connect("globex");
    const other = await globex.callTool({ name: "get_ticket_notes", arguments: { ticket_id: "HD-1001" } });
    expect(other.isError).toBe(true);
    const note = await globex.callTool({
      name: "add_ticket_note",
      arguments: { ticket_id: "HD-1001", body: "not mine" },
    });
    expect(note.isError).toBe(true);
    expect(JSON.stringify(note.content)).toContain("not_found");
    const purge = await globex.callTool({
      name: "purge_conversation",
      arguments: { conversation_id: "CV-1001", reason: "not mine" },
    });
    expect(purge.isError).toBe(true);
    expect((await effects("globex", "add_ticket_note")).count).toBe(0);
    const own = await globex.callTool({ name: "search_articles", arguments: { query: "warranty" } });
    expect(JSON.stringify(own.structuredContent)).toContain("kb_2_warranty");
    expect(JSON.stringify(own.structuredContent)).not.toContain("kb_1_");
    await globex.close();
  });
});

describe("faults by header", () => {
  const note = (headers: Record<string, string>, key: string, run?: string) =>
    rpc(
      "initech",
      "tools/call",
      {
        name: "add_ticket_note",
        arguments: { ticket_id: "HD-3001", body: `fault ${key}` },
        _meta: { [KEY_META]: key },
      },
      headers,
      run,
    );

  it("error_500 answers before the server runs: nothing applied", async () => {
    const headers = await openSession("initech");
    const key = crypto.randomUUID();
    const run = crypto.randomUUID();
    const answer = await note({ ...headers, "x-sandbox-fault": "error_500" }, key, run);
    expect(answer.status).toBe(500);
    expect(answer.json).toBeNull();
    expect(
      (await effects("initech", "add_ticket_note")).effects.filter((e) => e.idempotency_key === key),
    ).toHaveLength(0);
    expect((await sandboxRequests(run))[0]).toMatchObject({ path: "/mcp", fault: "error_500", status: 500 });
  });

  it("error_after_effect applies the note, answers 500, and the retry with the key replays it", async () => {
    const headers = await openSession("initech");
    const key = crypto.randomUUID();
    expect((await note({ ...headers, "x-sandbox-fault": "error_after_effect" }, key)).status).toBe(500);
    const retry = await note(headers, key);
    expect(retry.json?.result?._meta).toEqual({ "io.edge-tool-proxy/idempotent-replayed": true });
    expect(
      (await effects("initech", "add_ticket_note")).effects.filter((e) => e.idempotency_key === key),
    ).toHaveLength(1);
  });

  it("truncated and dropped_connection lose an answer whose effect is stored", async () => {
    const headers = await openSession("initech");
    const cut = crypto.randomUUID();
    const truncated = await note({ ...headers, "x-sandbox-fault": "truncated" }, cut);
    expect(truncated.status).toBe(200);
    expect(truncated.json).toBeNull();
    const dropped = crypto.randomUUID();
    await expect(note({ ...headers, "x-sandbox-fault": "dropped_connection" }, dropped)).rejects.toThrow();
    const applied = (await effects("initech", "add_ticket_note")).effects.map((e) => e.idempotency_key);
    expect(applied).toContain(cut);
    expect(applied).toContain(dropped);
  });

  it("hang waits before serving; a shape fault of the REST endpoints is refused", async () => {
    const headers = await openSession("initech");
    const started = Date.now();
    const slow = await rpc("initech", "tools/list", undefined, {
      ...headers,
      "x-sandbox-fault": "hang",
      "x-sandbox-fault-hang-ms": "300",
    });
    expect(slow.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(
      (await rpc("initech", "tools/list", undefined, { ...headers, "x-sandbox-fault": "stale" })).status,
    ).toBe(400);
  });
});

describe("drift", () => {
  async function listed(tenant: Tenant) {
    const headers = await openSession(tenant);
    const answer = await rpc(tenant, "tools/list", undefined, headers);
    return (answer.json?.result?.tools ?? []) as Array<{
      name: string;
      description: string;
      annotations?: Record<string, boolean>;
      inputSchema: { required?: string[] };
    }>;
  }
  const drift = (tool: string, change: string, tenant: Tenant = "acme") =>
    sandbox("/_admin/helpdesk/drift", { method: "POST", body: JSON.stringify({ tenant, tool, change }) });

  it("changes tools/list on the next request, for that tenant only, until reset", async () => {
    const before = await listed("acme");
    await drift("add_ticket_note", "description");
    await drift("add_ticket_note", "annotations");
    await drift("search_articles", "input_schema");
    await drift("purge_conversation", "removed");
    const after = await listed("acme");
    const note = after.find((t) => t.name === "add_ticket_note");
    expect(note?.description).not.toBe(before.find((t) => t.name === "add_ticket_note")?.description);
    expect(note?.annotations?.readOnlyHint).toBe(true);
    expect(after.find((t) => t.name === "search_articles")?.inputSchema.required).toContain("confirm_token");
    expect(after.map((t) => t.name)).not.toContain("purge_conversation");
    expect(await listed("globex")).toHaveLength(5);
    await sandbox("/_admin/helpdesk/drift?tenant=acme", { method: "DELETE" });
    expect(await listed("acme")).toEqual(before);
  });

  it("a removed tool is not callable", async () => {
    await drift("purge_conversation", "removed");
    const headers = await openSession("acme");
    const call = await rpc(
      "acme",
      "tools/call",
      { name: "purge_conversation", arguments: { conversation_id: "CV-1002", reason: "x" } },
      headers,
    );
    expect(JSON.stringify(call.json)).toMatch(/not found|Unknown tool/i);
    expect((await effects("acme", "purge_conversation")).count).toBe(0);
  });

  it("tells a 2025 session of a change once, on its next tool call's stream, before the answer", async () => {
    const init = await rpc("acme", "initialize", INIT_PARAMS);
    expect(init.json?.result?.capabilities).toMatchObject({ tools: { listChanged: true } });
    const headers = {
      "mcp-session-id": init.headers.get("mcp-session-id") ?? "",
      "mcp-protocol-version": "2025-06-18",
    };
    const search = { name: "search_articles", arguments: { query: "password" } };
    const quiet = await rpc("acme", "tools/call", search, headers);
    expect(quiet.headers.get("content-type")).toContain("application/json");

    await drift("get_ticket_notes", "annotations");
    const told = await rpc("acme", "tools/call", search, headers);
    expect(told.headers.get("content-type")).toContain("text/event-stream");
    const events = told.text.split("\n").filter((line) => line.startsWith("data: "));
    expect(events.map((line) => (JSON.parse(line.slice(6)) as { method?: string }).method)).toEqual([
      "notifications/tools/list_changed",
      undefined,
    ]);
    // Told once: the next call answers as before, and a session opened after the change is not told.
    const again = await rpc("acme", "tools/call", search, headers);
    expect(again.headers.get("content-type")).toContain("application/json");
    const fresh = await openSession("acme");
    expect((await rpc("acme", "tools/call", search, fresh)).headers.get("content-type")).toContain(
      "application/json",
    );
  });
});
