import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { catalog } from "../../src/tools";
import type { Envelope } from "../../src/wire/envelope";
import { propertyPlans } from "../property-plan";
import { signedInOperator } from "./console-client";
import { asOperator, callTool, KEYS, openRun, request, type TestRun, traceOf } from "./helpers";
import { bearer, connect, envelopeOf, rpc } from "./mcp-client";

const plan = propertyPlans(env);

/**
 * Tools per task: a run opened with a subset lists and calls only it, reaches the rest of its
 * tenant's grants through find_tools and use_tool (a use_tool call is the real tool's call in every
 * respect), and a REST caller may add granted tools explicitly. Nothing outside the grants is ever
 * listed, found, added or called.
 */

const names = (tools: unknown) => (tools as Array<{ name: string }>).map((tool) => tool.name);

async function specsOf(run: TestRun, format = "jsonschema") {
  const { body } = await request(`/v1/tools?format=${format}`, {
    headers: { authorization: `Bearer ${run.token}` },
  });
  return body.data as { namespace: string; tools: Array<Record<string, unknown>> };
}

function openAs(tenant: keyof typeof KEYS, body: Record<string, unknown>) {
  return request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${KEYS[tenant]}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function addTools(run: TestRun, body: unknown) {
  return request(`/v1/runs/${run.id}/tools`, {
    method: "POST",
    headers: { authorization: `Bearer ${run.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const REFUND = { order_id: "A1002", amount_cents: 110, reason: "user_cancel" };

describe("a run opened with a subset of tools", () => {
  it("lists only its subset, the namespace's built-in and find_tools and use_tool, in its answer and GET /v1/tools", async () => {
    const run = await openRun("acme", { tools: ["lookup_order", "shipping.lookup_shipment"] });
    const expected = ["lookup_order", "lookup_shipment", "read_result_page", "find_tools", "use_tool"];
    expect(names(run.data.tools)).toEqual(expected);
    // The home namespace is the first tool's when none is named.
    expect(run.data.namespace).toBe("support");
    const specs = await specsOf(run, "openai");
    expect(specs.tools).toHaveLength(expected.length);
    const whole = await openRun("acme", { namespace: "support" });
    expect(names(whole.data.tools)).not.toContain("find_tools");
  });

  it("calls its own tools directly, across namespaces, and refuses a tool outside its subset as not_found", async () => {
    const run = await openRun("acme", { tools: ["lookup_order", "shipping.lookup_shipment"] });
    expect((await callTool(run, "lookup_shipment", { order_id: "A1002" })).body.outcome).toBe("success");
    const outside = await callTool(run, "get_customer_profile", { customer_id: "C1" });
    expect(outside.body.error?.code).toBe("not_found");
    expect(outside.body.error?.message).toContain("find_tools");
  });

  it("finds a granted tool by intent and calls it through use_tool, the trace naming the real tool", async () => {
    const run = await openRun("acme", { namespace: "support", tools: ["search_refund_policy"] });
    const found = await callTool(run, "find_tools", { query: "reroute a shipment to another address" });
    expect(found.body.outcome).toBe("success");
    const tools = (found.body.data as { tools: Array<{ name: string; input_schema: unknown }> }).tools;
    expect(tools[0]?.name).toBe("reroute_shipment");
    expect(tools[0]?.input_schema).toMatchObject({ type: "object" });

    const used = await callTool(run, "use_tool", { name: "lookup_order", arguments: { order_id: "A1002" } });
    expect(used.body.outcome, JSON.stringify(used.body.error)).toBe("success");
    expect(used.body.tool).toBe("lookup_order");
    const entries = await traceOf(run);
    expect(entries.map((entry) => entry.tool)).toEqual(["find_tools", "lookup_order"]);
    expect(entries[1]?.via).toBe("use_tool");
    expect(entries[0]?.via).toBeUndefined();
    // The console names the real tool too, and how the model reached it.
    const { html } = await (await signedInOperator("acme")).get(`/console/runs/${run.id}`);
    expect(html).toContain('<span class="tool">lookup_order</span>');
    expect(html).toContain("via use_tool");
  });

  it("gives a use_tool call the real tool's key, approval and budget: the same as its direct call", async () => {
    const run = await openRun("acme", { namespace: "support", tools: ["issue_refund", "lookup_order"] });
    const direct = await callTool(run, "issue_refund", REFUND);
    expect(direct.body.error?.code).toBe("approval_required");
    const through = await callTool(run, "use_tool", { name: "issue_refund", arguments: REFUND });
    expect(through.body.error?.code).toBe("approval_required");
    expect(through.body.idempotency_key).toBe(direct.body.idempotency_key);
    expect(through.body.approval?.id).toBe(direct.body.approval?.id);
    expect(through.body.tool).toBe("issue_refund");
  });

  it("shows an operator a use_tool approval with its own tool's namespace: dry run and context from there", async () => {
    const run = await openRun("acme", { namespace: "support", tools: ["lookup_order"] });
    const args = { conversation_id: "CV-1002", reason: "customer deletion request" };
    const asked = await callTool(run, "use_tool", { name: "purge_conversation", arguments: args });
    expect(asked.body.error?.code, JSON.stringify(asked.body.error)).toBe("approval_required");
    const id = asked.body.approval?.id ?? "";
    const detail = await asOperator(`/v1/approvals/${id}`);
    expect(detail.body.data).toMatchObject({
      approval: { tool: "purge_conversation" },
      run: { namespace: "support" },
      tool_namespace: "helpdesk",
    });
    const { html } = await (await signedInOperator("acme")).get(`/console/approvals/${id}`);
    expect(html).toContain("only production shows whether the");
  });

  it("never reaches outside the tenant's grants: umbrella (support only) finds and calls no shipping tool", async () => {
    const run = await openRun("umbrella", { namespace: "support", tools: ["lookup_order"] });
    const found = await callTool(run, "find_tools", { query: "shipment reroute track parcel" });
    const tools = (found.body.data as { tools: Array<{ namespace: string }> }).tools;
    expect(tools.every((tool) => tool.namespace === "support")).toBe(true);
    const used = await callTool(run, "use_tool", {
      name: "reroute_shipment",
      arguments: { order_id: "A1002" },
    });
    expect(used.body.error?.code).toBe("not_found");
    expect(used.body.error?.problems?.[0]?.field).toBe("name");
    const qualified = await callTool(run, "use_tool", {
      name: "shipping.lookup_shipment",
      arguments: { order_id: "A1002" },
    });
    expect(qualified.body.error?.code).toBe("not_found");
  });
});

describe("bad input about tools", () => {
  it("refuses an open naming an unknown or ungranted tool, located, and opens nothing", async () => {
    const unknown = await openAs("acme", { namespace: "support", tools: ["lookup_order", "fly_rocket"] });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error?.code).toBe("validation_error");
    expect(unknown.body.error?.problems?.[0]?.field).toBe("tools[1]");
    expect(unknown.body.data).toBeNull();
    const ungranted = await openAs("umbrella", { tools: ["shipping.lookup_shipment"] });
    expect(ungranted.body.error?.code).toBe("validation_error");
    expect(ungranted.body.error?.problems?.[0]?.field).toBe("tools[0]");
    const malformed = await openAs("acme", { namespace: "support", tools: ["Lookup Order"] });
    expect(malformed.status).toBe(422);
    expect(malformed.body.error?.problems?.[0]?.field).toContain("tools");
    const empty = await openAs("acme", { namespace: "support", tools: [] });
    expect(empty.status).toBe(422);
  });

  it("refuses use_tool with bad arguments before anything is sent, naming the field", async () => {
    const run = await openRun("acme", { namespace: "support", tools: ["lookup_order"] });
    const noName = await callTool(run, "use_tool", { arguments: {} });
    expect(noName.body.error?.code).toBe("validation_error");
    expect(noName.body.error?.problems?.map((problem) => problem.field)).toContain("name");
    const badArgs = await callTool(run, "use_tool", { name: "issue_refund", arguments: { order_id: 7 } });
    expect(badArgs.body.error?.code).toBe("validation_error");
    expect(badArgs.body.error?.problems?.some((problem) => problem.field.startsWith("arguments."))).toBe(
      true,
    );
    expect(badArgs.body.idempotency_key).toBeNull();
    const entries = await traceOf(run);
    expect(entries.map((entry) => entry.upstream_attempts)).toEqual([[], []]);
  });

  it("caps find_tools and use_tool calls per run", async () => {
    const run = await openRun("acme", {
      namespace: "support",
      tools: ["lookup_order"],
      limits: { max_calls: 40 },
    });
    let last: Envelope | null = null;
    for (let i = 0; i < 21; i++) {
      last = (await callTool(run, "find_tools", { query: `refund ${i}` })).body;
    }
    expect(last?.error?.code).toBe("budget_exhausted");
    expect(last?.error?.message).toContain("find_tools");
    // A direct call of the run's own tools is not capped by it.
    expect((await callTool(run, "lookup_order", { order_id: "A1002" })).body.outcome).toBe("success");
  });
});

describe("adding found tools to a run over REST", () => {
  it("adds granted tools, which GET /v1/tools then lists and the run calls directly", async () => {
    const run = await openRun("acme", { namespace: "support", tools: ["lookup_order"] });
    const added = await addTools(run, { tools: ["lookup_shipment"] });
    expect(added.body.outcome, JSON.stringify(added.body.error)).toBe("success");
    expect(names((added.body.data as { tools: unknown }).tools)).toContain("lookup_shipment");
    expect(names((await specsOf(run)).tools)).toContain("lookup_shipment");
    expect((await callTool(run, "lookup_shipment", { order_id: "A1002" })).body.outcome).toBe("success");
  });

  it("refuses an ungranted or unknown tool, located, and adds nothing", async () => {
    const run = await openRun("umbrella", { namespace: "support", tools: ["lookup_order"] });
    const refused = await addTools(run, { tools: ["search_refund_policy", "shipping.lookup_shipment"] });
    expect(refused.body.error?.code).toBe("validation_error");
    expect(refused.body.error?.problems?.[0]?.field).toBe("tools[1]");
    expect(names((await specsOf(run)).tools)).not.toContain("search_refund_policy");
    const malformed = await addTools(run, { tools: "lookup_order" });
    expect(malformed.status).toBe(422);
  });
});

/** `tools/list` on MCP 2026-07-28 with a bearer: a run token, or an agent key before any run. */
function currentToolsList(token: string) {
  return rpc(
    { ...bearer(token), "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
  );
}

describe("MCP 2026-07-28 with a subset run's token", () => {
  const list = async (run: TestRun) => {
    const { json, text } = await currentToolsList(run.token);
    expect(json?.error, text).toBeUndefined();
    const result = json?.result as { tools: Array<{ name: string; annotations: Record<string, boolean> }> };
    return result.tools;
  };

  it("lists exactly the opened tools in a fixed order, unchanged by adds, with use_tool's cautious annotations", async () => {
    const run = await openRun("acme", { namespace: "support", tools: ["lookup_order"] });
    const before = await list(run);
    expect(before.map((tool) => tool.name)).toEqual([
      "find_tools",
      "lookup_order",
      "read_result_page",
      "use_tool",
    ]);
    expect(before.find((tool) => tool.name === "use_tool")?.annotations).toMatchObject({
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: true,
    });
    await addTools(run, { tools: ["lookup_shipment"] });
    await callTool(run, "find_tools", { query: "shipment" });
    expect(await list(run)).toEqual(before);
  });
});

describe("a subset run over the 2025 revisions and with a task key", () => {
  it("lists the subset to an MCP client holding the run token", async () => {
    const run = await openRun("acme", { namespace: "support", tools: ["lookup_order"] });
    const { client } = await connect(run.token);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        "lookup_order",
        "read_result_page",
        "find_tools",
        "use_tool",
      ]);
    } finally {
      await client.close();
    }
  });

  it("answers the same run for the same task and tools, and a conflict naming tools for other tools", async () => {
    const task_key = `tools-${crypto.randomUUID()}`;
    const first = await openAs("acme", { namespace: "support", tools: ["lookup_order"], task_key });
    const again = await openAs("acme", { namespace: "support", tools: ["lookup_order"], task_key });
    expect((again.body.data as { run_id: string }).run_id).toBe(
      (first.body.data as { run_id: string }).run_id,
    );
    const other = await openAs("acme", { namespace: "support", tools: ["issue_refund"], task_key });
    expect(other.body.error?.code).toBe("conflict_error");
    expect(other.body.error?.details).toMatchObject({ differing_fields: ["tools"] });
  });
});

describe("an agent profile with tools (acme's triage: lookup_order and shipping.lookup_shipment)", () => {
  const TRIAGE = "acme-triage-agent-key";

  it("opens its MCP session's run with them, and reaches its profile's namespaces only through use_tool", async () => {
    const { client } = await connect(TRIAGE);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        "lookup_order",
        "lookup_shipment",
        "read_result_page",
        "find_tools",
        "use_tool",
      ]);
      const profile = await client.callTool({
        name: "use_tool",
        arguments: { name: "get_customer_profile", arguments: { customer_id: "C100" } },
      });
      expect(envelopeOf(profile).outcome).toBe("success");
      // helpdesk is acme's, but not in the triage profile's reach (its namespace and its tools').
      const helpdesk = await client.callTool({
        name: "use_tool",
        arguments: { name: "search_articles", arguments: { query: "refund" } },
      });
      expect(envelopeOf(helpdesk).error?.code).toBe("not_found");
    } finally {
      await client.close();
    }
  });

  it("lists them over 2026-07-28 before any run is open, beside start_task", async () => {
    const { json, text } = await currentToolsList(TRIAGE);
    expect(json?.error, text).toBeUndefined();
    const result = json?.result as { tools: Array<{ name: string }> };
    expect(result.tools.map((tool) => tool.name)).toEqual([
      "start_task",
      "find_tools",
      "lookup_order",
      "lookup_shipment",
      "read_result_page",
      "use_tool",
    ]);
  });
});

describe("the grants invariant, end to end", () => {
  const SUPPORT = new Set(catalog.tools("support").map((tool) => tool.name));
  const OTHERS = catalog
    .all()
    .filter((tool) => tool.namespace !== "support")
    .map((tool) => tool.name);
  const asked = fc.oneof(
    fc.constantFrom(...OTHERS, ...SUPPORT, "find_tools", "use_tool"),
    fc.constantFrom("shipping.lookup_shipment", "helpdesk.search_articles", "support.lookup_order"),
  );

  it("a support-only tenant's run never lists, finds, adds or calls another namespace's tool", async () => {
    const seen = (names: string[]) => {
      for (const name of names)
        expect(SUPPORT.has(name) || name === "find_tools" || name === "use_tool").toBe(true);
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(asked, { minLength: 1, maxLength: 3 }),
        asked,
        asked,
        async (subset, used, added) => {
          const opened = await openAs("initech", { namespace: "support", tools: subset });
          if (opened.body.outcome !== "success") {
            expect(opened.body.error?.code).toBe("validation_error");
            return;
          }
          const data = opened.body.data as { run_id: string; run_token: string; tools: unknown };
          const run: TestRun = { id: data.run_id, token: data.run_token, tenant: "initech", data: {} };
          seen(names(data.tools));
          const found = await callTool(run, "find_tools", { query: `${used} ${added}`.replaceAll("_", " ") });
          seen(
            (found.body.data as { tools?: Array<{ name: string }> } | null)?.tools?.map(
              (tool) => tool.name,
            ) ?? [],
          );
          const call = await callTool(run, "use_tool", { name: used, arguments: { order_id: "A1002" } });
          if (call.body.tool !== null) seen([call.body.tool]);
          await addTools(run, { tools: [added] });
          seen(names((await specsOf(run)).tools));
          for (const entry of await traceOf(run)) if (entry.tool !== null) seen([entry.tool as string]);
        },
      ),
      plan({ seed: 2_026_120_424, numRuns: 6 }),
    );
  });
});
