import { describe, expect, it } from "vitest";
import { callTool, openRun, request, type TestRun } from "../helpers";
import { connect } from "../mcp-client";
import { WIDE_HELPDESK_TOOLS } from "./catalog";

/**
 * A namespace of more tools than a run lists at once (this project's helpdesk, catalog.ts): a run
 * opened without a subset lists the namespace's default set, finds the rest with find_tools and
 * calls them with use_tool, with every guarantee of a direct call. A subset still names any of them.
 */

const names = (tools: unknown) => (tools as Array<{ name: string }>).map((tool) => tool.name);
const DEFAULT_LISTING = [
  "search_articles",
  "get_ticket_notes",
  "add_ticket_note",
  "get_conversation",
  "purge_conversation",
  "read_result_page",
  "find_tools",
  "use_tool",
];

async function specsOf(run: TestRun) {
  const { body } = await request("/v1/tools?format=openai", {
    headers: { authorization: `Bearer ${run.token}` },
  });
  return body.data as { tools: Array<{ function: { name: string } }> };
}

describe("a namespace with a default set", () => {
  it("lists its default set, not its every tool, to a run opened without a subset: REST, spec export and MCP", async () => {
    const run = await openRun("acme", { namespace: "helpdesk" });
    expect(names(run.data.tools)).toEqual(DEFAULT_LISTING);
    expect((await specsOf(run)).tools.map((tool) => tool.function.name)).toEqual(DEFAULT_LISTING);
    const { client } = await connect(run.token);
    try {
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      expect(listed).toEqual(DEFAULT_LISTING);
    } finally {
      await client.close();
    }
    // The tenant's own export of the namespace is every tool of it.
    const whole = await request("/v1/tools?namespace=helpdesk&format=openai", {
      headers: { authorization: "Bearer acme-demo-key" },
    });
    const exported = (whole.body.data as { tools: Array<{ function: { name: string } }> }).tools;
    // Its own tools (and this project's other variants of them) and read_result_page.
    expect(exported.length).toBeGreaterThan(WIDE_HELPDESK_TOOLS);
    expect(exported.map((tool) => tool.function.name)).toEqual(
      expect.arrayContaining([...DEFAULT_LISTING.slice(0, 6), "search_archive1", "search_archive7"]),
    );
  });

  it("finds a tool outside the set with find_tools and calls it through use_tool; a direct call is refused", async () => {
    const run = await openRun("acme", { namespace: "helpdesk" });
    const found = await callTool(run, "find_tools", { query: "search archive7" });
    expect(found.body.outcome, JSON.stringify(found.body.error)).toBe("success");
    const tools = (found.body.data as { tools: Array<{ name: string }> }).tools;
    expect(tools[0]?.name).toBe("search_archive7");

    const direct = await callTool(run, "search_archive7", { query: "password" });
    expect(direct.body.error?.code).toBe("not_found");
    expect(direct.body.error?.message).toContain("find_tools");

    const used = await callTool(run, "use_tool", {
      name: "search_archive7",
      arguments: { query: "password" },
    });
    expect(used.body.outcome, JSON.stringify(used.body.error)).toBe("success");
    expect(used.body.tool).toBe("search_archive7");
  });

  it("lists a subset that names tools outside the default set, and only that", async () => {
    const run = await openRun("acme", { tools: ["helpdesk.search_archive3"] });
    expect(names(run.data.tools)).toEqual(["search_archive3", "read_result_page", "find_tools", "use_tool"]);
    const direct = await callTool(run, "search_archive3", { query: "password" });
    expect(direct.body.outcome, JSON.stringify(direct.body.error)).toBe("success");
  });
});
