import { Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { looseObjects } from "../../src/specs/json-schema";
import { openWorldOf } from "../../src/specs/mcp";
import { catalog } from "../../src/tools";
import {
  callTool,
  KEYS,
  openRun,
  refundsOf,
  request,
  sandboxRequests,
  type TestRun,
  traceOf,
} from "./helpers";
import { bearer, connect, envelopeOf, MCP_URL, rpc, textOf, transportWith, workerFetch } from "./mcp-client";

/** A client connected with the run's token, as a host configured with it connects. */
async function connectRun(run: TestRun, headers: Record<string, string> = {}): Promise<Client> {
  return (await connect(run.token, { headers })).client;
}

describe("MCP over Streamable HTTP", () => {
  it("initializes a stateless session that names the proxy and offers tools only", async () => {
    const client = await connectRun(await openRun());
    expect(client.getServerVersion()?.name).toBe("edge-tool-proxy");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getServerCapabilities()?.resources).toBeUndefined();
    await client.close();
  });

  it("lists exactly the run's namespace, with titles, strict input schemas and side-effect annotations", async () => {
    const client = await connectRun(await openRun());
    const { tools } = await client.listTools();
    const expected = catalog.tools("support");
    expect(tools.map((tool) => tool.name)).toEqual(expected.map((tool) => tool.name));

    for (const tool of tools) {
      const spec = expected.find((candidate) => candidate.name === tool.name);
      expect(tool.title).toBe(spec?.title);
      expect(tool.description).toContain("Use when:");
      expect(tool.description).toContain("Do not use when:");
      expect(tool.inputSchema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(looseObjects(tool.inputSchema), tool.name).toEqual([]);
      // Fields with a default are optional to the model: the schema is the input, not the output.
      expect(tool.outputSchema?.properties).toHaveProperty("idempotency_key");
      expect(tool.outputSchema?.properties).toHaveProperty("data");
      expect(tool.annotations?.openWorldHint).toBe(spec && openWorldOf(spec));
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool.annotations]));
    // lookup_order returns the customer's own note (untrusted); lookup_ticket only the tenant's fields.
    expect(byName.get("lookup_order")).toEqual({ readOnlyHint: true, openWorldHint: true });
    expect(byName.get("lookup_ticket")).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(byName.get("create_internal_ticket")).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(byName.get("issue_refund")).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(byName.get("send_customer_email")?.openWorldHint).toBe(true);
    // Third-party policy text: open-world because its output is untrusted, not by a hand-set flag.
    expect(byName.get("search_refund_policy")?.openWorldHint).toBe(true);
    await client.close();
  });

  it("calls a read tool through the pipeline and returns the envelope as structuredContent", async () => {
    const run = await openRun();
    const client = await connectRun(run);
    const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "A1001" } });
    expect(result.isError).toBe(false);
    const envelope = envelopeOf(result);
    expect(envelope.outcome).toBe("success");
    expect(envelope.tool).toBe("lookup_order");
    expect((envelope.data as { order_id: string }).order_id).toBe("A1001");
    // The output whitelist applies on this door too.
    expect(envelope.data).not.toHaveProperty("internal_notes");
    expect(textOf(result)).toMatch(
      /^lookup_order succeeded\. Budget left: \d+ calls, \d+ writes?, \d+ destructive actions?, .+ until the run's deadline\. Result: \{"order_id":"A1001"/,
    );

    // The run, not the MCP session, keys the ledger: the REST trace of the run shows the MCP call.
    const trace = await traceOf(run);
    expect(trace.map((entry) => entry.call_id)).toContain(envelope.call_id);
    await client.close();
  });

  it("answers a wrong field with an isError result that lists the problems", async () => {
    const client = await connectRun(await openRun());
    const result = await client.callTool({ name: "lookup_order", arguments: { orderId: "A1001" } });
    expect(result.isError).toBe(true);
    const envelope = envelopeOf(result);
    expect(envelope.outcome).toBe("terminal_failure");
    expect(envelope.error?.code).toBe("validation_error");
    expect(envelope.error?.recommended_next_action).toBe("fix_arguments");
    expect(envelope.error?.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "orderId", reason: "unknown field" }),
        expect.objectContaining({ field: "order_id", reason: "missing required field" }),
      ]),
    );
    expect(textOf(result)).toContain("orderId: unknown field");
    expect(textOf(result)).toContain('Did you mean "order_id"?');
    await client.close();
  });

  it("answers a tool outside the run's namespace with not_found, as a result the model can read", async () => {
    const client = await connectRun(await openRun());
    const result = await client.callTool({ name: "delete_everything", arguments: {} });
    expect(result.isError).toBe(true);
    const envelope = envelopeOf(result);
    expect(envelope.error?.code).toBe("not_found");
    expect(envelope.error?.details?.available_tools).toEqual(
      catalog.tools("support").map((tool) => tool.name),
    );
    await client.close();
  });

  it("gives a REST call and an identical MCP call of one run one key and one refund", async () => {
    const run = await openRun("initech");
    const args = { order_id: "I3004", amount_cents: 137, reason: "price_error" };
    const rest = await callTool(run, "issue_refund", args);
    expect(rest.body.idempotency_key).toMatch(/\S/);

    const client = await connectRun(run);
    const result = await client.callTool({ name: "issue_refund", arguments: args });
    const envelope = envelopeOf(result);
    expect(envelope.idempotency_key).toBe(rest.body.idempotency_key);
    expect(envelope.outcome).toBe(rest.body.outcome);
    expect(result.isError).toBe(envelope.outcome !== "success");

    // At the source: whatever the envelope says (executed, or held by a gate), at most one request
    // reached the payments API for this run, and exactly one refund exists when it succeeded.
    const posted = (await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds");
    const refunds = (await refundsOf("I3004")).filter((refund) => refund.run_id === run.id);
    if (rest.body.outcome === "success") {
      expect(envelope.replayed).toBe(true);
      expect(envelope.data).toEqual(rest.body.data);
      expect(posted).toHaveLength(1);
      expect(refunds).toHaveLength(1);
    } else {
      expect(refunds).toHaveLength(0);
      expect(posted.length).toBeLessThanOrEqual(1);
    }
    await client.close();
  });

  it("honours the orchestrator's intent header on both doors: same intent, same key; new intent, new key", async () => {
    const run = await openRun("initech");
    const args = {
      customer_id: "C301",
      priority: "low",
      summary: "Intent header parity check between doors.",
    };
    const rest = await callTool(run, "create_internal_ticket", args, { "x-call-intent": "attempt-1" });
    const same = await connectRun(run, { "x-call-intent": "attempt-1" });
    const other = await connectRun(run, { "x-call-intent": "attempt-2" });
    const sameKey = envelopeOf(await same.callTool({ name: "create_internal_ticket", arguments: args }));
    const otherKey = envelopeOf(await other.callTool({ name: "create_internal_ticket", arguments: args }));
    expect(sameKey.idempotency_key).toBe(rest.body.idempotency_key);
    expect(otherKey.idempotency_key).not.toBe(rest.body.idempotency_key);
    await same.close();
    await other.close();
  });

  it("refuses a second destructive call over budget, naming the limit", async () => {
    const run = await openRun("initech", { namespace: "support", limits: { max_destructive: 1 } });
    const client = await connectRun(run);
    const first = envelopeOf(
      await client.callTool({
        name: "issue_refund",
        arguments: { order_id: "I3005", amount_cents: 101, reason: "user_cancel" },
      }),
    );
    const second = await client.callTool({
      name: "issue_refund",
      arguments: { order_id: "I3005", amount_cents: 102, reason: "user_cancel" },
    });
    const envelope = envelopeOf(second);
    expect(second.isError).toBe(true);
    expect(envelope.idempotency_key).not.toBe(first.idempotency_key);
    // Only an executed first refund spends the one destructive unit; a gated one would not.
    if (first.outcome === "success") {
      expect(envelope.error?.code).toBe("budget_exhausted");
      expect(envelope.error?.details?.limit).toBe("max_destructive");
    }
    const refunds = (await refundsOf("I3005")).filter((refund) => refund.run_id === run.id);
    expect(refunds.length).toBeLessThanOrEqual(1);
    await client.close();
  });

  it("refuses calls after the run has ended, on the MCP door as on REST", async () => {
    const run = await openRun();
    const client = await connectRun(run);
    await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    const result = await client.callTool({ name: "lookup_order", arguments: { order_id: "A1001" } });
    expect(result.isError).toBe(true);
    expect(envelopeOf(result).error?.code).toBe("run_closed");
    await client.close();
  });

  it("falls back to the 2025 handshake for a client that probes for the 2026 revision first", async () => {
    const run = await openRun();
    const client = new Client(
      { name: "mcp-test", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    await connect(run.token, { client });
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(catalog.tools("support").length);
    await client.close();
  });
});

describe("MCP protocol errors are JSON-RPC errors", () => {
  it("answers an unknown method with -32601", async () => {
    const run = await openRun();
    const { status, text } = await rpc(bearer(run.token), {
      jsonrpc: "2.0",
      id: 7,
      method: "no/such_method",
    });
    expect(status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32601 } });
  });

  it("answers a body that is not JSON with a parse error", async () => {
    const run = await openRun();
    const { status, text } = await rpc(bearer(run.token), "{not json");
    expect(status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
  });

  it("answers a message that is not JSON-RPC with an invalid-request error", async () => {
    const run = await openRun();
    const { status, text } = await rpc(bearer(run.token), { hello: "world" });
    expect(status).toBe(400);
    expect(JSON.parse(text).error.code).toBeLessThan(-32000);
  });

  it("answers GET and DELETE of the stateless endpoint with 405", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await workerFetch(MCP_URL, { method });
      expect(response.status, method).toBe(405);
      expect(response.headers.get("allow")).toBe("POST");
      expect((await response.json()) as unknown).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    }
  });
});

describe("MCP authorization", () => {
  const resourceMetadata = "https://proxy.test/.well-known/oauth-protected-resource/mcp";

  it("answers a request without a token with 401 and a Bearer challenge naming the metadata", async () => {
    const { status, headers, body } = await request("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(status).toBe(401);
    expect(headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${resourceMetadata}"`);
    expect(body.error?.code).toBe("permission_error");
  });

  it("answers a tenant key or a forged token with 401 invalid_token", async () => {
    const run = await openRun();
    const forged = `${run.token.slice(0, -4)}AAAA`;
    for (const token of [KEYS.acme, forged]) {
      const { status, headers } = await request("/mcp", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(status).toBe(401);
      expect(headers.get("www-authenticate")).toMatch(
        /^Bearer error="invalid_token", error_description="[^"]+"/,
      );
      expect(headers.get("www-authenticate")).toContain(`resource_metadata="${resourceMetadata}"`);
    }
  });

  it("makes the official client fail to connect without a token", async () => {
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    await expect(client.connect(transportWith({}))).rejects.toThrow(/permission_error/);
  });

  it("serves the protected-resource metadata at both well-known paths", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource",
    ]) {
      const response = await workerFetch(`https://proxy.test${path}`);
      expect(response.status, path).toBe(200);
      expect(await response.json()).toMatchObject({
        resource: MCP_URL,
        bearer_methods_supported: ["header"],
      });
    }
  });

  it("applies the edge's input limits to tool arguments before the ledger", async () => {
    const run = await openRun();
    const client = await connectRun(run);
    let deep: unknown = "leaf";
    for (let level = 0; level < 20; level++) deep = { nested: deep };
    const result = await client.callTool({ name: "search_refund_policy", arguments: { query: deep } });
    expect(result.isError).toBe(true);
    expect(envelopeOf(result).error?.problems?.[0]?.reason).toMatch(/nested deeper than/);
    expect((await traceOf(run)).length).toBe(0);
  });
});
