import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { signToken } from "../../src/auth/signed-token";
import { RETENTION_MS } from "../../src/ledger/run-ledger";
import { catalog } from "../../src/tools";
import { type Envelope, envelopeSchema } from "../../src/wire/envelope";
import { rewindRun } from "./clock";
import {
  armFault,
  asOperator,
  decide,
  ledgerStubOf,
  openRun,
  refund,
  refundsOf,
  refundsOfRun,
  sandboxRequests,
  type TestRun,
} from "./helpers";
import { bearer, MCP_URL, rpc } from "./mcp-client";

/**
 * `/mcp` on the 2026-07-28 revision, as raw JSON-RPC: no handshake and no session, every request
 * names its revision and client capabilities in `_meta`. A run token is its run; an agent key names
 * a run per call with the run handle `start_task` minted; a call waiting for a human becomes a task
 * for clients that declare the tasks extension.
 */

const VERSION = "2026-07-28";
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const AGENT = "acme-agent-key";
const KEYS: string[] = JSON.parse(env.RUN_TOKEN_KEYS);

interface Options {
  capabilities?: Record<string, unknown>;
  headers?: Record<string, string>;
  meta?: Record<string, unknown>;
}

/** One current-revision request, with the headers a conforming client sends. */
async function current(
  key: string,
  method: string,
  params: Record<string, unknown> = {},
  options: Options = {},
) {
  const name =
    typeof params.name === "string" ? params.name : typeof params.taskId === "string" ? params.taskId : null;
  const headers: Record<string, string> = {
    ...bearer(key),
    "mcp-protocol-version": VERSION,
    "mcp-method": method,
    ...(name === null ? {} : { "mcp-name": name }),
    ...options.headers,
  };
  const _meta = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? {},
    ...options.meta,
  };
  return rpc(headers, { jsonrpc: "2.0", id: 7, method, params: { ...params, _meta } });
}

type Result = Record<string, unknown> & {
  content?: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

async function resultOf(answer: Promise<Awaited<ReturnType<typeof current>>>): Promise<Result> {
  const { status, json, text } = await answer;
  expect(status, text).toBe(200);
  expect(json?.error, text).toBeUndefined();
  return json?.result as Result;
}

const envelopeOf = (result: Result): Envelope => envelopeSchema().parse(result.structuredContent);

const call = (key: string, name: string, args: Record<string, unknown>, options: Options = {}) =>
  resultOf(current(key, "tools/call", { name, arguments: args }, options));

interface Started {
  run_handle: string;
  run_id: string;
  expires_at: string;
  budget: { calls_left: number };
  reused: boolean;
}

async function startTask(key = AGENT, args: Record<string, unknown> = {}): Promise<Started> {
  const result = await call(key, "start_task", args);
  expect(result.isError, JSON.stringify(result)).not.toBe(true);
  return result.structuredContent as unknown as Started;
}
const runOf = (tenant: "acme" | "globex", id: string): TestRun => ({ id, tenant, token: "", data: {} });

describe("both revisions on one endpoint", () => {
  it("server/discover names the revision, the tools and the tasks extension", async () => {
    const result = await resultOf(current(AGENT, "server/discover"));
    expect(result.supportedVersions).toEqual([VERSION]);
    expect(result.capabilities).toMatchObject({
      tools: {},
      extensions: { "io.modelcontextprotocol/tasks": {} },
    });
    expect(result.resultType).toBe("complete");
    expect(result._meta).toMatchObject({ "io.modelcontextprotocol/serverInfo": { name: "edge-tool-proxy" } });
  });

  it("a run token's tools/list is its namespace in a stable order, cacheable privately", async () => {
    const run = await openRun("acme");
    const answer = await current(run.token, "tools/list");
    expect(answer.headers.get("mcp-session-id")).toBeNull();
    const result = await resultOf(Promise.resolve(answer));
    const names = (result.tools as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toEqual(
      catalog
        .tools("support")
        .map((tool) => tool.name)
        .sort(),
    );
    expect(result).toMatchObject({ resultType: "complete", cacheScope: "private", ttlMs: 300_000 });
    expect(result._meta).toMatchObject({ "io.modelcontextprotocol/serverInfo": { name: "edge-tool-proxy" } });
    const again = await resultOf(current(run.token, "tools/list"));
    expect(again.tools).toEqual(result.tools);
  });

  it("a run token's call runs in its run, with the 2026 result shape", async () => {
    const run = await openRun("acme");
    const result = await call(run.token, "lookup_order", { order_id: "A1001" });
    expect(result.resultType).toBe("complete");
    const envelope = envelopeOf(result);
    expect(envelope.outcome).toBe("success");
    const status = await ledgerStubOf(run).status("acme");
    expect(status?.used.calls_used).toBe(1);
  });

  it("refuses a header that disagrees with the body, or is missing, with -32020", async () => {
    const run = await openRun("acme");
    const mismatch = await current(run.token, "tools/list", {}, { headers: { "mcp-method": "tools/call" } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json?.error).toMatchObject({ code: -32020 });
    const wrongName = await current(
      run.token,
      "tools/call",
      { name: "lookup_order", arguments: { order_id: "A1001" } },
      { headers: { "mcp-name": "issue_refund" } },
    );
    expect(wrongName.json?.error).toMatchObject({ code: -32020 });
    const noName = await rpc(
      { ...bearer(run.token), "mcp-protocol-version": VERSION, "mcp-method": "tools/call" },
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "lookup_order",
          arguments: { order_id: "A1001" },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      },
    );
    expect(noName.json?.error).toMatchObject({ code: -32020 });
    // Nothing ran: no call reached the run, which is not even stored (its open stored nothing).
    expect(await ledgerStubOf(run).status("acme")).toBeNull();
  });

  it("answers an unsupported revision with -32022 naming the supported one", async () => {
    const answer = await current(
      AGENT,
      "tools/list",
      {},
      {
        headers: { "mcp-protocol-version": "2027-01-01" },
        meta: { "io.modelcontextprotocol/protocolVersion": "2027-01-01" },
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.json?.error).toMatchObject({ code: -32022, data: { supported: [VERSION] } });
  });

  it("answers tasks/* from a client without the tasks extension with -32021", async () => {
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const answer = await current(AGENT, method, { taskId: "tk1.x.y" });
      expect(answer.json?.error, method).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
      });
    }
  });

  it("answers with one JSON message, no log notification, even when _meta asks for a log level", async () => {
    const answer = await current(
      AGENT,
      "tools/list",
      {},
      { meta: { "io.modelcontextprotocol/logLevel": "debug" } },
    );
    expect(answer.headers.get("content-type")).toContain("application/json");
    expect(answer.text).not.toContain("notifications/message");
  });

  it("still serves a 2025 client on the same endpoint: initialize opens a session", async () => {
    const answer = await rpc(bearer(AGENT), {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("mcp-session-id")).toMatch(/^ms1\./);
  });
});

describe("an agent's runs without sessions", () => {
  it("lists start_task and every tool with a required run_handle", async () => {
    const result = await resultOf(current(AGENT, "tools/list"));
    const tools = result.tools as Array<{
      name: string;
      inputSchema: { required?: string[]; properties?: object };
    }>;
    expect(tools[0]?.name).toBe("start_task");
    for (const tool of tools.slice(1)) {
      expect(tool.inputSchema.required).toContain("run_handle");
      expect(tool.inputSchema.properties).toHaveProperty("run_handle");
    }
    expect(tools.slice(1).map((tool) => tool.name)).toEqual(
      catalog
        .tools("support")
        .map((tool) => tool.name)
        .sort(),
    );
  });

  it("start_task opens a run with the profile's limits; the handle names it on every call", async () => {
    const started = await startTask();
    expect(started.run_handle).toMatch(/^rh1\./);
    expect(started.budget.calls_left).toBe(60);
    const read = envelopeOf(
      await call(AGENT, "lookup_order", { order_id: "A1001", run_handle: started.run_handle }),
    );
    expect(read.outcome).toBe("success");
    expect(read.budget).toMatchObject({ calls_left: 59 });
    // Any key of the same profile may use it (a rotation keeps runs alive).
    const next = envelopeOf(
      await call("acme-next-agent-key", "lookup_order", {
        order_id: "A1002",
        run_handle: started.run_handle,
      }),
    );
    expect(next.budget).toMatchObject({ calls_left: 58 });
  });

  it("derives the key from the tool's own arguments: the handle is stripped, an identical write replays", async () => {
    const started = await startTask();
    const args = { customer_id: "C100", priority: "normal", summary: "Customer asked about a late parcel." };
    const first = envelopeOf(
      await call(AGENT, "create_internal_ticket", { ...args, run_handle: started.run_handle }),
    );
    expect(first.outcome, JSON.stringify(first.error)).toBe("success");
    const again = envelopeOf(
      await call(AGENT, "create_internal_ticket", { ...args, run_handle: started.run_handle }),
    );
    expect(again.replayed).toBe(true);
    expect(again.idempotency_key).toBe(first.idempotency_key);
    const trace = (await ledgerStubOf(runOf("acme", started.run_id)).readTrace("acme")) as {
      entries: Array<{ args: unknown }>;
    } | null;
    expect(trace?.entries.length).toBeGreaterThan(0);
    for (const entry of trace?.entries ?? []) expect(entry.args).not.toHaveProperty("run_handle");
  });

  it("start_task with a task key answers the same run again", async () => {
    const task_key = `task-${crypto.randomUUID()}`;
    const first = await startTask(AGENT, { task_key });
    const second = await startTask(AGENT, { task_key });
    expect(second.run_id).toBe(first.run_id);
    expect(second.reused).toBe(true);
  });

  it("start_task refuses arguments it does not take", async () => {
    for (const args of [{ task_key: 7 }, { namespace: "shipping" }]) {
      const result = await call(AGENT, "start_task", args);
      expect(result.isError).toBe(true);
      expect(envelopeOf(result).error?.code).toBe("validation_error");
    }
  });

  it("refuses a missing, forged, expired, another profile's or another tenant's handle, and runs nothing", async () => {
    const before = (await refundsOf("A1004")).length;
    const mine = await startTask();
    const globex = await startTask("globex-agent-key");
    const [prefix, body = "", mac = ""] = mine.run_handle.split(".");
    const claims = { tenant: "acme", profile: "support", run: mine.run_id, ns: "support" };
    const cases: Array<[string | undefined, string]> = [
      [undefined, "validation_error"],
      [42 as unknown as string, "validation_error"],
      [`${prefix}.${body}.${mac.startsWith("A") ? "B" : "A"}${mac.slice(1)}`, "permission_error"],
      [await signToken("rh1", { ...claims, exp: Date.now() - 1000 }, KEYS), "permission_error"],
      [
        await signToken("rh1", { ...claims, profile: "billing", exp: Date.now() + 60_000 }, KEYS),
        "permission_error",
      ],
      [globex.run_handle, "permission_error"],
      [await signToken("ms1", { ...claims, exp: Date.now() + 60_000 }, KEYS), "permission_error"],
    ];
    for (const [handle, code] of cases) {
      const args = { ...refund("A1004", 150), ...(handle === undefined ? {} : { run_handle: handle }) };
      const result = await call(AGENT, "issue_refund", args);
      expect(result.isError, String(handle)).toBe(true);
      const envelope = envelopeOf(result);
      expect(envelope.error?.code).toBe(code);
      expect(envelope.error?.message).toMatch(/run_handle/);
    }
    // No call reached either run: neither is even stored (start_task's open stores nothing).
    expect(await ledgerStubOf(runOf("acme", mine.run_id)).status("acme")).toBeNull();
    expect(await ledgerStubOf(runOf("globex", globex.run_id)).status("globex")).toBeNull();
    expect(await refundsOf("A1004")).toHaveLength(before);
  });

  it("a handle of an ended run is refused by its ledger", async () => {
    const started = await startTask();
    // Its first call creates the run (start_task stores nothing); then it ends.
    const first = await call(AGENT, "lookup_order", { order_id: "A1001", run_handle: started.run_handle });
    expect(envelopeOf(first).outcome).toBe("success");
    await ledgerStubOf(runOf("acme", started.run_id)).end("acme");
    const result = await call(AGENT, "lookup_order", { order_id: "A1001", run_handle: started.run_handle });
    expect(envelopeOf(result).error?.code).toBe("run_closed");
  });

  it("a second start_task run making the same auto-approved refund waits for a human naming the first", async () => {
    const first = await startTask("globex-agent-key");
    const second = await startTask("globex-agent-key");
    const done = envelopeOf(
      await call("globex-agent-key", "issue_refund", {
        ...refund("B2003", 600),
        run_handle: first.run_handle,
      }),
    );
    expect(done.outcome, JSON.stringify(done.error)).toBe("success");
    const again = envelopeOf(
      await call("globex-agent-key", "issue_refund", {
        ...refund("B2003", 600),
        run_handle: second.run_handle,
      }),
    );
    expect(again.error?.code).toBe("approval_required");
    expect((again.error?.details as { earlier_effects?: unknown[] } | undefined)?.earlier_effects).toEqual([
      expect.objectContaining({ run_id: first.run_id, identity: { order_id: "B2003" } }),
    ]);
    expect(
      (await refundsOf("B2003")).filter((r) => r.run_id === first.run_id || r.run_id === second.run_id),
    ).toHaveLength(1);
  });

  it("a model opening runs on purpose is stopped by the run-open rate limit, and a task key opens nothing new", async () => {
    // umbrella may open 4 runs a minute.
    const opened: string[] = [];
    const task = await startTask("umbrella-agent-key", { task_key: "ticket-77" });
    opened.push(task.run_id);
    for (let i = 0; i < 3; i += 1) opened.push((await startTask("umbrella-agent-key")).run_id);
    expect(new Set(opened).size).toBe(4);
    const refused = await call("umbrella-agent-key", "start_task", {});
    expect(refused.isError).toBe(true);
    expect(envelopeOf(refused).error).toMatchObject({
      code: "rate_limited",
      details: { scope: "runs_opened", limit: 4 },
    });
    expect(refused.structuredContent).not.toHaveProperty("run_handle");
    expect(refused.content?.[0]?.text).toMatch(/rate_limited/);
    // The task it was given still answers: the same run, not a new one.
    const same = await startTask("umbrella-agent-key", { task_key: "ticket-77" });
    expect(same).toMatchObject({ run_id: task.run_id, reused: true });
  });

  it("acme's second start_task run asking the same refund names the earlier request to the operator", async () => {
    const first = await startTask();
    const second = await startTask();
    const before = (await refundsOf("A1005")).length;
    const asked = envelopeOf(
      await call(AGENT, "issue_refund", { ...refund("A1005", 210), run_handle: first.run_handle }),
    );
    expect(asked.error?.code).toBe("approval_required");
    const again = envelopeOf(
      await call(AGENT, "issue_refund", { ...refund("A1005", 210), run_handle: second.run_handle }),
    );
    expect(again.error?.code).toBe("approval_required");
    expect((again.error?.details as { earlier_effects?: unknown[] } | undefined)?.earlier_effects).toEqual([
      expect.objectContaining({ run_id: first.run_id, identity: { order_id: "A1005" } }),
    ]);
    expect(await refundsOf("A1005")).toHaveLength(before);
  });
});

interface TaskResult {
  resultType?: string;
  taskId: string;
  status: string;
  statusMessage: string;
  createdAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result?: Result;
}

async function askRefund(order: string, amount: number, key = AGENT) {
  const started = await startTask(key);
  const args = { ...refund(order, amount), run_handle: started.run_handle };
  const task = (await call(key, "issue_refund", args, { capabilities: TASKS })) as unknown as TaskResult;
  return { started, args, task };
}

const getTask = (taskId: string, key = AGENT) =>
  current(key, "tasks/get", { taskId }, { capabilities: TASKS });
const cancelTask = (taskId: string, key = AGENT) =>
  current(
    key,
    "tasks/cancel",
    { taskId, reason: "the customer changed their mind" },
    { capabilities: TASKS },
  );

/** An empty result: nothing but what every 2026-07-28 result carries (its type, the server's info). */
const acknowledged = (result: Result): boolean =>
  result.resultType === "complete" &&
  Object.keys(result).every((key) => ["resultType", "_meta"].includes(key));

async function approvalIdOf(taskId: string): Promise<string> {
  const task = (await resultOf(getTask(taskId))) as unknown as TaskResult;
  return /approval (\S+?):/.exec(task.statusMessage)?.[1] ?? "";
}

describe("approval waits as tasks", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("returns a working task that names the approval, who decides and when it expires", async () => {
    const { task, started } = await askRefund("A1001", 130);
    expect(task).toMatchObject({ resultType: "task", status: "working", pollIntervalMs: 30_000 });
    expect(task.taskId).toMatch(/^tk1\./);
    expect(task.statusMessage).toMatch(
      /approval apr_\S+: an operator of acme holding support_lead must approve or reject it/,
    );
    // The approval's window, then the run's retention.
    expect(task.ttlMs).toBeGreaterThan(RETENTION_MS);
    expect(task.ttlMs).toBeLessThanOrEqual(2 * RETENTION_MS);
    const before = (await ledgerStubOf(runOf("acme", started.run_id)).status("acme"))?.used.calls_used;
    const polled = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(polled).toMatchObject({ taskId: task.taskId, status: "working", resultType: "complete" });
    // Polling costs nothing.
    expect((await ledgerStubOf(runOf("acme", started.run_id)).status("acme"))?.used.calls_used).toBe(before);
  });

  it("counts ttlMs from the approval's creation: the same when created and on every read, as time passes", async () => {
    const { task, started } = await askRefund("A1004", 135);
    const approvalId = await approvalIdOf(task.taskId);
    const stored = async () =>
      (
        (await asOperator(`/v1/approvals/${approvalId}`)).body.data as {
          approval: { created_at: string; expires_at: string };
        }
      ).approval;
    const asked = await stored();
    expect(task.createdAt).toBe(asked.created_at);
    expect(task.ttlMs).toBe(Date.parse(asked.expires_at) + RETENTION_MS - Date.parse(asked.created_at));

    // Half the approval's window passes (its stored clock moves back).
    const half = Math.floor((Date.parse(asked.expires_at) - Date.now()) / 2);
    await rewindRun(runOf("acme", started.run_id), half);
    const later = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(later.status).toBe("working");
    expect(later.createdAt).toBe((await stored()).created_at);
    expect(Date.parse(later.createdAt)).toBe(Date.parse(asked.created_at) - half);
    expect(later.ttlMs).toBe(task.ttlMs);
  });

  it("names two people and the roles above acme's two-person threshold, counts the first, and says when it is overdue", async () => {
    const { task, started } = await askRefund("A1001", 35_000);
    expect(task.statusMessage).toMatch(
      /2 different operators of acme holding finance_lead \(0 of 2 so far\) must approve or reject it/,
    );
    const approvalId = await approvalIdOf(task.taskId);
    // Other tests of this file refund A1001 in other runs: the operator confirms having seen them.
    expect((await decide(approvalId, "approve", "checked", "acme", { confirm_duplicate: true })).status).toBe(
      200,
    );
    const half = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(half).toMatchObject({ status: "working" });
    expect(half.statusMessage).toContain("(1 of 2 so far)");
    expect(half.statusMessage).not.toContain("overdue");

    // Its SLA passes: the run's alarm marks it overdue and tells the escalation role.
    const ledger = ledgerStubOf(runOf("acme", started.run_id));
    await runInDurableObject(ledger, (_instance, state) => {
      state.storage.sql.exec("UPDATE approvals SET sla_due_at = ? WHERE id = ?", Date.now() - 1, approvalId);
    });
    await runDurableObjectAlarm(ledger);
    const late = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(late.statusMessage).toMatch(
      /It is overdue: its decision was due at \S+, and the escalation role was told\.$/,
    );
  });

  it("completes with the call's result once an operator approves", async () => {
    const before = (await refundsOf("A1002")).length;
    const { task } = await askRefund("A1002", 140);
    const approvalId = await approvalIdOf(task.taskId);
    expect((await decide(approvalId, "approve", "checked")).status).toBe(200);
    const done = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(false);
    expect(envelopeOf(done.result as Result).outcome).toBe("success");
    expect(done.result?.content?.[0]?.text).toMatch(
      /^support\.issue_refund succeeded|issue_refund succeeded/,
    );
    expect(await refundsOf("A1002")).toHaveLength(before + 1);
  });

  it("an approved call whose send failed completes as an error saying to call again; that call executes it once", async () => {
    const run = await openRun("acme");
    await armFault(run.id, { mode: "bad_gateway", path_prefix: "/refunds", times: 1 });
    const args = refund("A1002", 2);
    const task = (await call(run.token, "issue_refund", args, {
      capabilities: TASKS,
    })) as unknown as TaskResult;
    const approvalId = /approval (\S+?):/.exec(task.statusMessage)?.[1] ?? "";
    // Other tests of this file refund A1002 in other runs: the operator confirms having seen them.
    const approved = await decide(approvalId, "approve", "checked", "acme", { confirm_duplicate: true });
    expect(approved.body.data).toMatchObject({ approval: { state: "approved", result: null } });

    // The send got a 502: nothing will send it again by itself, and reading the task sends nothing.
    for (let poll = 0; poll < 2; poll += 1) {
      const failed = (await resultOf(getTask(task.taskId, run.token))) as unknown as TaskResult;
      expect(failed.status).toBe("completed");
      expect(failed.result?.isError).toBe(true);
      expect(failed.result?.content?.[0]?.text).toMatch(
        /did not finish: whether it took effect is unknown.*Call again with the same arguments: the same idempotency key is sent, so it cannot happen twice\./,
      );
      expect(envelopeOf(failed.result as Result)).toMatchObject({
        outcome: "retryable_failure",
        approval: { id: approvalId, state: "approved" },
      });
    }
    const sentOnce = (await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds");
    expect(sentOnce.map((entry) => entry.status)).toEqual([502]);

    const resent = await call(run.token, "issue_refund", args, { capabilities: TASKS });
    expect(resent.resultType).toBe("complete");
    expect(envelopeOf(resent).outcome).toBe("success");
    const sent = (await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds");
    expect(sent.map((entry) => entry.status)).toEqual([502, 201]);
    expect(new Set(sent.map((entry) => entry.idempotency_key)).size).toBe(1);
    expect(await refundsOfRun("A1002", run)).toHaveLength(1);

    const done = (await resultOf(getTask(task.taskId, run.token))) as unknown as TaskResult;
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(false);
    expect(envelopeOf(done.result as Result)).toMatchObject({
      outcome: "success",
      approval: { id: approvalId, state: "executed" },
    });
  });

  it("a rejected wait completes as an error saying nothing was executed", async () => {
    const before = (await refundsOf("A1003")).length;
    const { task } = await askRefund("A1003", 150);
    const approvalId = await approvalIdOf(task.taskId);
    expect((await decide(approvalId, "reject", "not eligible")).status).toBe(200);
    const done = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(true);
    expect(done.result?.content?.[0]?.text).toMatch(
      /^Nothing was executed: an operator rejected it \(operator's reason: "not eligible"\)\..* Do not retry; tell the user/,
    );
    expect(envelopeOf(done.result as Result).error?.code).toBe("approval_rejected");
    expect(await refundsOf("A1003")).toHaveLength(before);
  });

  it("tasks/cancel withdraws the request with an empty acknowledgement: no operator can execute it later", async () => {
    const before = (await refundsOf("A1004")).length;
    const { task } = await askRefund("A1004", 160);
    const approvalId = await approvalIdOf(task.taskId);
    expect(acknowledged(await resultOf(cancelTask(task.taskId)))).toBe(true);
    const cancelled = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.result?.content?.[0]?.text).toMatch(/^Nothing was executed/);
    const detail = (await asOperator(`/v1/approvals/${approvalId}`)).body.data as {
      approval: { state: string };
    };
    expect(JSON.stringify(detail)).toContain("withdrawn by the agent: the customer changed their mind");
    expect((await decide(approvalId, "approve", "too late")).status).toBe(409);
    expect(await refundsOf("A1004")).toHaveLength(before);
    // Cancelling again is acknowledged the same.
    expect(acknowledged(await resultOf(cancelTask(task.taskId)))).toBe(true);
  });

  it("tasks/update is acknowledged and changes nothing: the wait asks for no input", async () => {
    const { task } = await askRefund("A1004", 175);
    const approvalId = await approvalIdOf(task.taskId);
    const update = (taskId: string) =>
      current(
        AGENT,
        "tasks/update",
        { taskId, inputResponses: { approve: { action: "accept", content: { approved: true } } } },
        { capabilities: TASKS },
      );
    expect(acknowledged(await resultOf(update(task.taskId)))).toBe(true);
    const after = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(after.status).toBe("working");
    const detail = (await asOperator(`/v1/approvals/${approvalId}`)).body.data as {
      approval: { state: string };
    };
    expect(detail.approval.state).toBe("pending");
    for (const taskId of ["tk1.nothing.here", `${task.taskId}x`]) {
      const refused = await update(taskId);
      expect(refused.json?.error, refused.text).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/^Unknown task/),
      });
    }
  });

  it("tasks/cancel after an operator approved is acknowledged, and the call runs as approved", async () => {
    const before = (await refundsOf("A1001")).length;
    const { task } = await askRefund("A1001", 165);
    const approvalId = await approvalIdOf(task.taskId);
    // Other tests of this file refund A1001 in other runs: the operator confirms having seen them.
    const approved = await decide(approvalId, "approve", "checked", "acme", { confirm_duplicate: true });
    expect(approved.status).toBe(200);
    const answer = await cancelTask(task.taskId);
    expect(answer.json?.error, answer.text).toBeUndefined();
    expect(acknowledged(answer.json?.result as Result)).toBe(true);
    const done = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(done.status).toBe("completed");
    expect(envelopeOf(done.result as Result)).toMatchObject({
      outcome: "success",
      approval: { id: approvalId, state: "executed" },
    });
    expect(await refundsOf("A1001")).toHaveLength(before + 1);
  });

  it("a dropped connection cancels the request, never the approval held in the ledger", async () => {
    const before = (await refundsOf("A1002")).length;
    const started = await startTask();
    const args = { ...refund("A1002", 190), run_handle: started.run_handle };
    const body = {
      jsonrpc: "2.0",
      id: 11,
      method: "tools/call",
      params: {
        name: "issue_refund",
        arguments: args,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": VERSION,
          "io.modelcontextprotocol/clientCapabilities": TASKS,
        },
      },
    };
    // The client goes away before it reads the answer: it never learns the task id.
    const dropping = new AbortController();
    const response = await exports.default.fetch(
      new Request(MCP_URL, {
        method: "POST",
        signal: dropping.signal,
        headers: {
          ...bearer(AGENT),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": VERSION,
          "mcp-method": "tools/call",
          "mcp-name": "issue_refund",
        },
        body: JSON.stringify(body),
      }),
    );
    dropping.abort();
    await response.body?.cancel();

    // The ledger still holds the request for a human; the same call finds it again as a task.
    const again = (await call(AGENT, "issue_refund", args, { capabilities: TASKS })) as unknown as TaskResult;
    expect(again.status).toBe("working");
    const approvalId = await approvalIdOf(again.taskId);
    const detail = (await asOperator(`/v1/approvals/${approvalId}`)).body.data as {
      approval: { state: string };
    };
    expect(detail.approval.state).toBe("pending");
    // Another test of this file refunded the same order in another run: the operator confirms it.
    const approved = await decide(approvalId, "approve", "checked", "acme", { confirm_duplicate: true });
    expect(approved.status).toBe(200);
    const done = (await resultOf(getTask(again.taskId))) as unknown as TaskResult;
    expect(envelopeOf(done.result as Result).outcome, JSON.stringify(done.result?.structuredContent)).toBe(
      "success",
    );
    expect(await refundsOf("A1002")).toHaveLength(before + 1);
  });

  it("a client without the extension gets today's approval_required envelope", async () => {
    const started = await startTask();
    const result = await call(AGENT, "issue_refund", {
      ...refund("A1001", 170),
      run_handle: started.run_handle,
    });
    expect(result.resultType).toBe("complete");
    expect(result.isError).toBe(true);
    expect(envelopeOf(result).error?.code).toBe("approval_required");
  });

  it("refuses another principal's, another tenant's, a forged or unknown task, and changes nothing", async () => {
    const { task } = await askRefund("A1005", 180);
    const approvalId = await approvalIdOf(task.taskId);
    const run = await openRun("acme");
    const [prefix, body = "", mac = ""] = task.taskId.split(".");
    const claims = { tenant: "acme", run: run.id, approval: "apr_nope", principal: `run:${run.id}` };
    const expiredOfAnother = await signToken("tk1", { ...claims, exp: Date.now() - 60_000 }, KEYS);
    const attempts = [
      cancelTask(task.taskId, run.token),
      getTask(task.taskId, run.token),
      cancelTask(task.taskId, "globex-agent-key"),
      cancelTask(`${prefix}.${body}.${mac.startsWith("A") ? "B" : "A"}${mac.slice(1)}`),
      cancelTask("tk1.nothing.here"),
      getTask(expiredOfAnother),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect(answer.json?.error, answer.text).toMatchObject({ code: -32602 });
      expect((answer.json?.error as { message?: string } | undefined)?.message).toMatch(/Unknown task/);
    }
    // A signed id is one the proxy handed out: an approval its ledger does not hold is one deleted.
    const deleted = await signToken("tk1", { ...claims, exp: Date.now() + 60_000 }, KEYS);
    expect((await getTask(deleted, run.token)).json?.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^This task's records are gone/),
    });
    const detail = (await asOperator(`/v1/approvals/${approvalId}`)).body.data as {
      approval: { state: string };
    };
    expect(detail.approval.state).toBe("pending");
  });

  it("a task that ran is read after its approval's window, until its records are gone", async () => {
    const { task, started } = await askRefund("A1003", 155);
    const approvalId = await approvalIdOf(task.taskId);
    const approved = await decide(approvalId, "approve", "checked", "acme", { confirm_duplicate: true });
    expect(approved.status).toBe(200);
    const expiresAt = Date.parse(
      (approved.body.data as { approval: { expires_at: string } }).approval.expires_at,
    );
    const real = Date.now.bind(Date);
    const clockAt = (at: number) => {
      const offset = at - real();
      vi.spyOn(Date, "now").mockImplementation(() => real() + offset);
    };
    const gone = {
      code: -32602,
      message: expect.stringMatching(
        /^This task's records are gone: a task is kept for 24 h after its approval's expiry or its run's end, whichever comes first/,
      ),
    };

    // The approval's window has closed: the refund it executed is still what the task says.
    clockAt(expiresAt + 60_000);
    const late = (await resultOf(getTask(task.taskId))) as unknown as TaskResult;
    expect(late.status).toBe("completed");
    expect(envelopeOf(late.result as Result)).toMatchObject({
      outcome: "success",
      approval: { id: approvalId, state: "executed" },
    });

    // A day after it: the id has expired with the run's retention.
    clockAt(expiresAt + RETENTION_MS + 60_000);
    for (const answer of [await getTask(task.taskId), await cancelTask(task.taskId)]) {
      expect(answer.json?.error, answer.text).toMatchObject(gone);
      expect(answer.text).not.toMatch(/can no longer execute/);
    }
    vi.restoreAllMocks();

    // Within the id's life, the run's data deleted (its retention counts from its end) answers the same.
    const ledger = ledgerStubOf(runOf("acme", started.run_id));
    await ledger.end("acme");
    await runInDurableObject(ledger, (_instance, state) => {
      state.storage.sql.exec("UPDATE run SET ended_at = ?", Date.now() - RETENTION_MS - 1_000);
    });
    expect(await runDurableObjectAlarm(ledger)).toBe(true);
    expect((await getTask(task.taskId)).json?.error).toMatchObject(gone);
  });

  it("a run token's wait is a task too, bound to that run", async () => {
    const run = await openRun("acme");
    const task = (await call(run.token, "issue_refund", refund("A1001", 190), {
      capabilities: TASKS,
    })) as unknown as TaskResult;
    expect(task.resultType).toBe("task");
    expect(((await resultOf(getTask(task.taskId, run.token))) as unknown as TaskResult).status).toBe(
      "working",
    );
    const other = await openRun("acme");
    expect((await getTask(task.taskId, other.token)).json?.error).toMatchObject({ code: -32602 });
    expect((await getTask(task.taskId, AGENT)).json?.error).toMatchObject({ code: -32602 });
  });
});
