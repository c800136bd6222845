import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { parseKeyList } from "../../src/auth/keys";
import { issueRunToken } from "../../src/auth/run-token";
import { armFault, assertNoSecrets, callTool, openRun, request, type TestRun } from "./helpers";

/**
 * Every route × every kind of wrong credential → the expected refusal, and nothing of the victim's
 * run, approval or trace in the answer. `request` scans every body for secrets as well.
 */

interface Fixture {
  victim: TestRun;
  otherRun: TestRun;
  otherTenantRun: TestRun;
  expiredToken: string;
  approvalId: string;
  handle: string;
}

let fx: Fixture;

beforeAll(async () => {
  const victim = await openRun("acme", { namespace: "support", limits: { max_calls: 50 } });
  const asked = await callTool(victim, "issue_refund", {
    order_id: "A1001",
    amount_cents: 100,
    reason: "user_cancel",
  });
  await armFault(victim.id, { mode: "large", path_prefix: "/refund-policies" });
  const large = await callTool(victim, "search_refund_policy", { query: "refund" });
  fx = {
    victim,
    otherRun: await openRun("acme"),
    otherTenantRun: await openRun("globex"),
    expiredToken: await issueRunToken(
      { tenant: "acme", run: victim.id, ns: "support", exp: Date.now() - 1_000 },
      parseKeyList("RUN_TOKEN_KEYS", env.RUN_TOKEN_KEYS),
    ),
    approvalId: asked.body.approval?.id ?? "",
    handle: (large.body.data as { handle: string }).handle,
  };
});

type Credential =
  | "none"
  | "malformed"
  | "expired"
  | "other_run"
  | "other_tenant_run"
  | "tenant_key"
  | "agent_key"
  | "foreign_operator";

function bearer(kind: Credential): Record<string, string> {
  const token = {
    none: null,
    malformed: "rt1.not-a.token",
    expired: fx.expiredToken,
    other_run: fx.otherRun.token,
    other_tenant_run: fx.otherTenantRun.token,
    tenant_key: "acme-demo-key",
    // The victim's own tenant's agent key: it opens runs of its own, and reaches no other.
    agent_key: "acme-agent-key",
    foreign_operator: "globex-operator-key",
  }[kind];
  return token ? { authorization: `Bearer ${token}` } : {};
}

const runRoutes = () => [
  { name: "run status", method: "GET", path: `/v1/runs/${fx.victim.id}` },
  {
    name: "tool call",
    method: "POST",
    path: `/v1/runs/${fx.victim.id}/calls`,
    body: { tool: "lookup_order", args: { order_id: "A1001" } },
  },
  { name: "trace", method: "GET", path: `/v1/runs/${fx.victim.id}/trace` },
  { name: "result page", method: "GET", path: `/v1/runs/${fx.victim.id}/results/${fx.handle}?cursor=0` },
  { name: "end run", method: "POST", path: `/v1/runs/${fx.victim.id}/end` },
];

/** What each wrong credential gets on a run's routes: who are you (401) or not yours (403). */
const RUN_ROUTE_EXPECTED: Record<Credential, number> = {
  none: 401,
  malformed: 401,
  expired: 401,
  other_run: 403,
  other_tenant_run: 403,
  tenant_key: 401,
  agent_key: 401,
  foreign_operator: 401,
};

describe("isolation matrix", () => {
  const kinds = Object.keys(RUN_ROUTE_EXPECTED) as Credential[];

  it.each(kinds)("refuses %s on every route of a run, revealing nothing of it", async (kind) => {
    for (const route of runRoutes()) {
      const { status, body } = await request(route.path, {
        method: route.method,
        headers: { "content-type": "application/json", ...bearer(kind) },
        body: route.body ? JSON.stringify(route.body) : undefined,
      });
      expect(status, `${route.name} with ${kind}`).toBe(RUN_ROUTE_EXPECTED[kind]);
      expect(body.error?.code, route.name).toBe("permission_error");
      expect(JSON.stringify(body), route.name).not.toContain("A1001");
    }
    // None of it touched the victim's run: still open, nothing charged beyond its own two calls.
    const status = await request(`/v1/runs/${fx.victim.id}`, {
      headers: { authorization: `Bearer ${fx.victim.token}` },
    });
    expect(status.body.data).toMatchObject({ state: "open", used: { calls_used: 2 } });
  });

  it.each([
    ["none", 401],
    ["malformed", 401],
    ["a run token", 401],
    ["an operator key", 401],
  ] as const)("refuses %s where a tenant key opens runs", async (kind, expected) => {
    const headers: Record<string, string> =
      kind === "none"
        ? {}
        : {
            authorization: `Bearer ${{ malformed: "x", "a run token": fx.victim.token, "an operator key": "acme-operator-key" }[kind]}`,
          };
    const { status } = await request("/v1/runs", {
      method: "POST",
      headers,
      body: JSON.stringify({ namespace: "support" }),
    });
    expect(status).toBe(expected);
  });

  it("lets an agent key open only a run of its own where a tenant key opens runs", async () => {
    const { status, body } = await request("/v1/runs", {
      method: "POST",
      headers: { ...bearer("agent_key"), "content-type": "application/json" },
      body: JSON.stringify({ namespace: "support" }),
    });
    expect(status).toBe(201);
    expect((body.data as { run_id: string }).run_id).not.toBe(fx.victim.id);
  });

  it.each(["none", "malformed", "expired", "agent_key", "foreign_operator"] as const)(
    "refuses %s on the tool specs",
    async (kind) => {
      const { status } = await request("/v1/tools?namespace=support", { headers: bearer(kind) });
      expect(status).toBe(401);
    },
  );

  it.each([
    ["none", 401],
    ["malformed", 401],
    ["a run token", 403],
    ["a tenant key", 403],
    ["an agent key", 403],
    ["another tenant's operator key", 404],
  ] as const)("refuses %s on an approval", async (kind, expected) => {
    const token = {
      none: null,
      malformed: "x",
      "a run token": fx.victim.token,
      "a tenant key": "acme-demo-key",
      "an agent key": "acme-agent-key",
      "another tenant's operator key": "globex-operator-key",
    }[kind];
    const headers: Record<string, string> = token
      ? { authorization: `Bearer ${token}`, "content-type": "application/json" }
      : {};
    for (const [method, path] of [
      ["GET", `/v1/approvals/${fx.approvalId}`],
      ["POST", `/v1/approvals/${fx.approvalId}/approve`],
      ["POST", `/v1/approvals/${fx.approvalId}/reject`],
    ] as const) {
      const { status } = await request(path, {
        method,
        headers,
        body: method === "POST" ? '{"reason":"no"}' : undefined,
      });
      expect(status, `${method} ${path}`).toBe(expected);
    }
    const approval = await request(`/v1/approvals/${fx.approvalId}`, {
      headers: { authorization: "Bearer acme-operator-key" },
    });
    expect(approval.body.data).toMatchObject({ approval: { state: "pending" } });
  });

  it.each(["none", "malformed", "expired", "tenant_key", "foreign_operator"] as const)(
    "refuses %s on /mcp",
    async (kind) => {
      const response = await exports.default.fetch("https://proxy.test/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...bearer(kind),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      const text = await response.text();
      assertNoSecrets(text);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    },
  );

  it("lets an agent key reach only its own session's run over MCP", async () => {
    const post = (key: string, body: unknown, session?: string) =>
      exports.default.fetch("https://proxy.test/mcp", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${key}`,
          ...(session ? { "mcp-session-id": session } : {}),
        },
        body: JSON.stringify(body),
      });
    const call = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "lookup_order", arguments: { order_id: "A1001" } },
    };
    // No session: nothing is served, and the victim's run is not a session to be named.
    const sessionless = await post("acme-agent-key", call);
    expect(sessionless.status).toBe(400);
    assertNoSecrets(await sessionless.text());
    const initialized = await post("globex-agent-key", {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const session = initialized.headers.get("mcp-session-id") ?? "";
    expect(session).toMatch(/^ms1\./);
    // globex's session may not read acme's order: refused by policy inside globex's own run.
    const answered = await post("globex-agent-key", call, session);
    const text = await answered.text();
    assertNoSecrets(text);
    expect(text).toContain("permission_error");
    // acme's agent key with globex's session: not its session, 404.
    expect((await post("acme-agent-key", call, session)).status).toBe(404);
  });

  it("lets a token reach only its own run over MCP: another run's token lists and calls in that run", async () => {
    const response = await exports.default.fetch("https://proxy.test/mcp", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...bearer("other_tenant_run"),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "lookup_order", arguments: { order_id: "A1001" } },
      }),
    });
    const text = await response.text();
    assertNoSecrets(text);
    // globex's run may not read acme's order: refused by policy inside globex's own run.
    expect(text).toContain("permission_error");
  });
});
