import {
  type CallToolRequestParams,
  Client,
  type JSONRPCResponse,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
} from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { Receipt } from "../../src/wire/audit";
import { asOperator, decide, ledgerStubOf, refund, refundsOf, type TestRun } from "./helpers";
import { connect, envelopeOf, textOf } from "./mcp-client";

/**
 * A call that waits for a human, driven end to end by the MCP SDK's own `Client` (2.4) pinned to
 * 2026-07-28 with a static agent key, declaring the `io.modelcontextprotocol/tasks` extension.
 *
 * What the SDK does itself: the extension goes into the `capabilities` of the Client's options,
 * and the SDK sends them on every request in `_meta["io.modelcontextprotocol/clientCapabilities"]`
 * (the proxy answers with a task only to a request that declared it). `tasks/get` and
 * `tasks/cancel` go through `client.request(...)` with explicit result schemas: the SDK lets these
 * two names, which the extension reuses, through its era gate when a schema is given.
 *
 * What it does not: its 2026-07-28 result decoder refuses a `tools/call` result whose `resultType`
 * is `"task"` before any result schema is consulted (`SdkError` UNSUPPORTED_RESULT_TYPE; the
 * typescript-sdk issue #2637), so neither `callTool` nor `request` with a task schema returns the
 * task. `TasksClient` below is the narrowest way through the SDK itself: it overrides the
 * protected `_onresponse` seam that Client subclasses use to read a response they own (the SDK's
 * own `subscriptions/listen` does the same), keeps the task result exactly as it arrived, lets the
 * SDK settle the call as it always does, and hands the kept task back when the call was refused
 * for being a task and nothing else. Nothing on the wire is rewritten or sent by hand.
 */

const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The tool result a completed task carries. */
const ToolResultSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});

/** A task as `tools/call` (once it waits) and `tasks/get` describe it. */
const TaskSchema = z.looseObject({
  taskId: z.string(),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  statusMessage: z.string(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number(),
  pollIntervalMs: z.number(),
  result: ToolResultSchema.optional(),
});
type Task = z.infer<typeof TaskSchema>;

/**
 * What `tasks/cancel` answers: an empty result. The SDK reads its `resultType` off the wire; only
 * the `_meta` every result carries (the server's info) is left.
 */
const AcknowledgementSchema = z.strictObject({ _meta: z.record(z.string(), z.unknown()).optional() });

/** `tools/call` answered with a task instead of the tool's result. */
const CreateTaskResultSchema = TaskSchema.extend({ resultType: z.literal("task") });

class TasksClient extends Client {
  /** A task result that has arrived and not been claimed by the call it answers. */
  #arrived: unknown;
  /** Calls that may answer with a task, one at a time, so each claims the task that answered it. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor() {
    super(
      { name: "tasks-client", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      },
    );
  }

  protected override _onresponse(response: JSONRPCResponse): void {
    const result = "result" in response ? (response.result as Record<string, unknown>) : undefined;
    if (result?.resultType === "task") this.#arrived = result;
    super._onresponse(response);
  }

  /** `tools/call`: the tool's result, or the task it became. */
  callToolOrTask(
    params: CallToolRequestParams,
  ): Promise<{ task: Task } | { result: z.infer<typeof ToolResultSchema> }> {
    const call = this.#queue.then(async () => {
      this.#arrived = undefined;
      try {
        return { result: await this.request({ method: "tools/call", params }, ToolResultSchema) };
      } catch (error) {
        const refusedAsTask =
          error instanceof SdkError &&
          error.code === SdkErrorCode.UnsupportedResultType &&
          (error.data as { resultType?: unknown } | undefined)?.resultType === "task";
        if (!refusedAsTask || this.#arrived === undefined) throw error;
        return { task: CreateTaskResultSchema.parse(this.#arrived) };
      } finally {
        this.#arrived = undefined;
      }
    });
    this.#queue = call.catch(() => undefined);
    return call;
  }

  getTask(taskId: string): Promise<Task> {
    return this.request({ method: "tasks/get", params: { taskId } }, TaskSchema);
  }

  cancelTask(taskId: string, reason: string): Promise<z.infer<typeof AcknowledgementSchema>> {
    return this.request({ method: "tasks/cancel", params: { taskId, reason } }, AcknowledgementSchema);
  }
}

async function connected(): Promise<TasksClient> {
  const client = new TasksClient();
  await connect("acme-agent-key", { client });
  return client;
}

/** Opens a run with `start_task` and asks a refund in it that waits for an operator. */
async function askRefund(client: TasksClient, order: string, cents: number) {
  const started = await client.callTool({ name: "start_task", arguments: {} });
  expect(started.isError).not.toBe(true);
  const { run_handle, run_id } = started.structuredContent as { run_handle: string; run_id: string };
  const answer = await client.callToolOrTask({
    name: "issue_refund",
    arguments: { ...refund(order, cents), run_handle },
  });
  if (!("task" in answer)) throw new Error(`expected a task, got ${JSON.stringify(answer.result)}`);
  const approvalId = /approval (apr_\S+?):/.exec(answer.task.statusMessage)?.[1] ?? "";
  expect(approvalId).toMatch(/^apr_/);
  const run: TestRun = { id: run_id, tenant: "acme", token: "", data: {} };
  return { task: answer.task, approvalId, run };
}

const callsUsed = async (run: TestRun) => (await ledgerStubOf(run).status("acme"))?.used.calls_used;

describe("the SDK client on 2026-07-28 with the tasks extension", () => {
  it("an approval wait is a task: polling is free, approval completes it with the call's result, once", async () => {
    const client = await connected();
    const before = (await refundsOf("A1002")).length;
    const { task, approvalId, run } = await askRefund(client, "A1002", 171);
    expect(task).toMatchObject({ status: "working", pollIntervalMs: 30_000 });
    expect(task.taskId).toMatch(/^tk1\./);
    expect(task.statusMessage).toContain(
      `Waiting for approval ${approvalId}: an operator of acme holding support_lead must approve or reject it`,
    );
    expect(task.ttlMs).toBeGreaterThan(0);

    const used = await callsUsed(run);
    const polled = await client.getTask(task.taskId);
    expect(polled).toMatchObject({ taskId: task.taskId, status: "working" });
    expect(polled.result).toBeUndefined();
    expect(await callsUsed(run)).toBe(used);
    expect(await refundsOf("A1002")).toHaveLength(before);

    expect((await decide(approvalId, "approve", "verified")).status).toBe(200);
    const done = await client.getTask(task.taskId);
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(false);
    const envelope = envelopeOf(done.result ?? {});
    expect(envelope).toMatchObject({
      outcome: "success",
      approval: { id: approvalId, state: "executed", execution: "executed" },
    });
    expect(done.statusMessage).toBe(`Approval ${approvalId} was granted and the call executed.`);
    expect(textOf(done.result ?? {})).toMatch(/issue_refund succeeded/);
    expect(await refundsOf("A1002")).toHaveLength(before + 1);

    // Asking again reads the same result; nothing runs a second time.
    const again = await client.getTask(task.taskId);
    expect(again.status).toBe("completed");
    expect(again.result).toEqual(done.result);
    expect(await refundsOf("A1002")).toHaveLength(before + 1);
    await client.close();
  });

  it("an approved call the upstream refused completes as an error saying it did not take effect", async () => {
    const client = await connected();
    // A1005 is cancelled: the payments API refuses any refund of it, having done nothing.
    const before = (await refundsOf("A1005")).length;
    const { task, approvalId } = await askRefund(client, "A1005", 161);
    expect((await decide(approvalId, "approve", "checked", "acme", { confirm_duplicate: true })).status).toBe(
      502,
    );
    const done = await client.getTask(task.taskId);
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(true);
    const told = `Approval ${approvalId} was granted, but the upstream refused the call: it did not take effect.`;
    expect(done.statusMessage).toBe(told);
    expect(textOf(done.result ?? {})).toContain(told);
    expect(textOf(done.result ?? {})).not.toMatch(/call (executed|ran)/);
    expect(envelopeOf(done.result ?? {}).approval).toMatchObject({ state: "executed", execution: "refused" });
    expect(await refundsOf("A1005")).toHaveLength(before);
    await client.close();
  });

  it("a rejected wait completes as an error saying nothing was executed", async () => {
    const client = await connected();
    const before = (await refundsOf("A1003")).length;
    const { task, approvalId } = await askRefund(client, "A1003", 181);
    expect((await decide(approvalId, "reject", "not eligible")).status).toBe(200);
    const done = await client.getTask(task.taskId);
    expect(done.status).toBe("completed");
    expect(done.result?.isError).toBe(true);
    expect(textOf(done.result ?? {})).toMatch(
      /^Nothing was executed: an operator rejected it \(operator's reason: "not eligible"\)\./,
    );
    expect(envelopeOf(done.result ?? {}).error?.code).toBe("approval_rejected");
    expect(await refundsOf("A1003")).toHaveLength(before);
    await client.close();
  });

  it("tasks/cancel withdraws the request: an operator's later approval is refused and nothing runs", async () => {
    const client = await connected();
    const before = (await refundsOf("A1004")).length;
    const { task, approvalId } = await askRefund(client, "A1004", 191);
    const acknowledged = await client.cancelTask(task.taskId, "the customer changed their mind");
    expect(Object.keys(acknowledged).filter((key) => key !== "_meta")).toEqual([]);
    const cancelled = await client.getTask(task.taskId);
    expect(cancelled.status).toBe("cancelled");
    expect(textOf(cancelled.result ?? {})).toMatch(/^Nothing was executed/);
    expect((await decide(approvalId, "approve", "too late")).status).toBe(409);
    expect((await client.getTask(task.taskId)).status).toBe("cancelled");
    expect(await refundsOf("A1004")).toHaveLength(before);
    // The cancellation is the one decision of the approval the audit log records; the late approval is none.
    const runId = (
      (await asOperator(`/v1/approvals/${approvalId}`)).body.data as { approval: { run_id: string } }
    ).approval.run_id;
    const audit = (await asOperator(`/v1/audit?run_id=${runId}`)).body.data as { receipts: Receipt[] };
    expect(audit.receipts).toMatchObject([
      {
        type: "approval.withdrawn",
        actor: { kind: "agent" },
        approval: {
          id: approvalId,
          state: "expired",
          reason: "withdrawn by the agent: the customer changed their mind",
        },
      },
    ]);
    await client.close();
  });

  it("the SDK's callTool alone refuses the task result, which is why the client above reads it", async () => {
    const client = await connected();
    const started = await client.callTool({ name: "start_task", arguments: {} });
    const { run_handle } = started.structuredContent as { run_handle: string };
    const refused = await client
      .callTool({ name: "issue_refund", arguments: { ...refund("A1005", 221), run_handle } })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SdkError);
    expect(refused).toMatchObject({ code: SdkErrorCode.UnsupportedResultType, data: { resultType: "task" } });
    await client.close();
  });

  it("a task id that was not handed out is refused as invalid params, naming what to send", async () => {
    const client = await connected();
    const { task } = await askRefund(client, "A1005", 201);
    for (const taskId of ["tk1.forged.token", `${task.taskId}x`]) {
      const refused = await client.getTask(taskId).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(ProtocolErrorCode.InvalidParams);
      expect((refused as ProtocolError).message).toContain("Unknown task");
    }
    await client.close();
  });
});

describe("the SDK client on 2026-07-28 without the tasks extension", () => {
  it("gets the approval_required envelope, and tasks/get is refused for the missing capability", async () => {
    const client = new Client(
      { name: "plain-client", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await connect("acme-agent-key", { client });
    const started = await client.callTool({ name: "start_task", arguments: {} });
    const { run_handle } = started.structuredContent as { run_handle: string };
    const asked = await client.callTool({
      name: "issue_refund",
      arguments: { ...refund("A1005", 211), run_handle },
    });
    expect(envelopeOf(asked).error?.code).toBe("approval_required");
    const refused = await client
      .request({ method: "tasks/get", params: { taskId: "tk1.x.y" } }, TaskSchema)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).code).toBe(ProtocolErrorCode.MissingRequiredClientCapability);
    await client.close();
  });
});
