import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseKeyList } from "../../src/auth/keys";
import { issueRunToken } from "../../src/auth/run-token";
import { namespacesOf, openRun, request } from "./helpers";

const keys = () => parseKeyList("RUN_TOKEN_KEYS", env.RUN_TOKEN_KEYS);

function callWith(runId: string, authorization: string | null) {
  return request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ tool: "lookup_order", args: { order_id: "A1001" } }),
  });
}

describe("runs and credentials", () => {
  it("opens a run with a tenant key and returns a scoped, expiring run token", async () => {
    const run = await openRun();
    expect(run.id).toMatch(/^run_[0-9a-f]{32}$/);
    expect(run.token).toMatch(/^rt1\./);
    expect(run.data).toMatchObject({ namespace: "support", environment: "sandbox", state: "open" });
    expect(Date.parse(run.data.expires_at as string)).toBeGreaterThan(Date.now());
    expect((run.data.tools as Array<{ name: string }>).map((tool) => tool.name)).toContain("issue_refund");
  });

  it("refuses to open a run without a tenant key (401)", async () => {
    const { status, headers, body } = await request("/v1/runs", { method: "POST", body: "{}" });
    expect(status).toBe(401);
    expect(headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(body.error?.code).toBe("permission_error");
  });

  it("refuses a wrong tenant key (401)", async () => {
    const { status, body } = await request("/v1/runs", {
      method: "POST",
      headers: { authorization: "Bearer acme-demo-key-but-wrong" },
      body: JSON.stringify({ namespace: "support" }),
    });
    expect(status).toBe(401);
    expect(body.error?.message).toBe("The tenant key or agent key is not valid.");
  });

  it("refuses a namespace the tenant does not have", async () => {
    const { status, body } = await request("/v1/runs", {
      method: "POST",
      headers: { authorization: "Bearer acme-demo-key" },
      body: JSON.stringify({ namespace: "payroll" }),
    });
    expect(status).toBe(404);
    expect(body.error?.details?.namespaces).toEqual(namespacesOf("acme"));
  });

  it("refuses limits above the tenant's ceiling, naming the ceiling", async () => {
    const { status, body } = await request("/v1/runs", {
      method: "POST",
      headers: { authorization: "Bearer globex-demo-key" },
      body: JSON.stringify({ namespace: "support", limits: { max_calls: 101 } }),
    });
    expect(status).toBe(422);
    expect(body.error?.problems).toEqual([
      { field: "limits.max_calls", reason: "101 is above the tenant's ceiling", hint: "At most 100." },
    ]);
  });

  it("refuses a tool call without a token (401)", async () => {
    const run = await openRun();
    const { status, body } = await callWith(run.id, null);
    expect(status).toBe(401);
    expect(body.error?.code).toBe("permission_error");
  });

  it("refuses a forged token (401)", async () => {
    const run = await openRun();
    const [prefix, payload] = run.token.split(".");
    const { status } = await callWith(run.id, `Bearer ${prefix}.${payload}.AAAA`);
    expect(status).toBe(401);
  });

  it("refuses a token signed with another key (401)", async () => {
    const run = await openRun();
    const token = await issueRunToken(
      { tenant: "acme", run: run.id, ns: "support", exp: Date.now() + 60_000 },
      ["an-attacker-chosen-signing-key"],
    );
    expect((await callWith(run.id, `Bearer ${token}`)).status).toBe(401);
  });

  it("refuses an expired token and says so (401)", async () => {
    const run = await openRun();
    const token = await issueRunToken(
      { tenant: "acme", run: run.id, ns: "support", exp: Date.now() - 1 },
      keys(),
    );
    const { status, body } = await callWith(run.id, `Bearer ${token}`);
    expect(status).toBe(401);
    expect(body.error?.message).toMatch(/expired/);
  });

  it("refuses another run's token (403)", async () => {
    const mine = await openRun();
    const other = await openRun();
    const { status, body } = await callWith(mine.id, `Bearer ${other.token}`);
    expect(status).toBe(403);
    expect(body.error?.message).toMatch(/another run/);
  });

  it("refuses a tenant key where a run token is needed (401)", async () => {
    const run = await openRun();
    expect((await callWith(run.id, "Bearer acme-demo-key")).status).toBe(401);
  });

  it("never lets a token of one tenant reach another tenant's run", async () => {
    const globexRun = await openRun("globex");
    // A validly signed token that claims acme for globex's run id finds no run: ledgers are keyed by tenant too.
    const token = await issueRunToken(
      { tenant: "acme", run: globexRun.id, ns: "support", exp: Date.now() + 60_000 },
      keys(),
    );
    const { status, body } = await callWith(globexRun.id, `Bearer ${token}`);
    expect(status).toBe(404);
    expect(body.error?.code).toBe("not_found");
  });

  it("answers unknown routes with a not_found envelope", async () => {
    const { status, body } = await request("/v2/whatever");
    expect(status).toBe(404);
    expect(body.error?.code).toBe("not_found");
  });
});
