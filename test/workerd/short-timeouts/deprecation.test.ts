import { afterEach, describe, expect, it } from "vitest";
import type { ToolSpec } from "../../../src/catalog/define-tool";
import type { Deprecation } from "../../../src/catalog/deprecation";
import { signedInOperator } from "../console-client";
import { callTool, openRun, refundsOfRun, request, type TestRun } from "../helpers";
import { connect, envelopeOf, textOf } from "../mcp-client";
import { restoreCatalog, reviseCatalog } from "./catalog";

/**
 * A tool on its way out (`deprecated`, src/catalog/deprecation.ts): until its sunset it is listed
 * with the notice and every answer carries it (REST headers and envelope, MCP text); from the sunset
 * on, a call is refused with a redirect to its successor. The health page names who still calls it.
 */

afterEach(() => restoreCatalog());

const WHY = "The payments API v0 is switched off; refunds go through the current API.";
const NOTICE: Deprecation = {
  since: "2026-01-15",
  sunset: "2099-06-30",
  use_instead: "issue_refund",
  why: WHY,
};

/** The catalog served now, with the v0 refund deprecated as `deprecated` says. */
function deprecating(deprecated: Deprecation) {
  reviseCatalog((tools: readonly ToolSpec[]) =>
    tools.map((tool) => (tool.name === "issue_refund_v0" ? { ...tool, deprecated } : tool)),
  );
}

/** Runs that may refund more than once. */
const WIDE = { namespace: "support", limits: { max_destructive: 3 } };

/** globex refunds up to 1000 cents without a human: the v0 refund goes straight upstream. */
const smallRefund = (order: string) => ({ order_id: order, amount_cents: 25, reason: "user_cancel" });

async function descriptionOf(run: TestRun, name: string): Promise<string> {
  const { body } = await request("/v1/tools?format=openai", {
    headers: { authorization: `Bearer ${run.token}` },
  });
  const tools = (body.data as { tools: Array<{ function: { name: string; description: string } }> }).tools;
  return tools.find((tool) => tool.function.name === name)?.function.description ?? "";
}

describe("a deprecated tool", () => {
  it("answers until its sunset with the notice: RFC 9745 and RFC 8594 headers, the envelope, the listing and MCP's text", async () => {
    const run = await openRun("globex", WIDE);
    deprecating(NOTICE);
    // Deprecating changes none of its calls: the run is not told the tool changed.
    const { status, headers, body } = await callTool(run, "issue_refund_v0", smallRefund("B2001"));
    expect(status, JSON.stringify(body.error)).toBe(200);
    expect(headers.get("deprecation")).toBe(`@${Date.UTC(2026, 0, 15) / 1000}`);
    expect(headers.get("sunset")).toBe("Tue, 30 Jun 2099 00:00:00 GMT");
    expect(body.deprecation).toEqual(NOTICE);
    // Another tool's answer carries nothing.
    const other = await callTool(run, "lookup_order", { order_id: "B2002" });
    expect(other.headers.get("deprecation")).toBeNull();
    expect(other.body.deprecation).toBeUndefined();

    expect(await descriptionOf(run, "issue_refund_v0")).toMatch(
      /^Deprecated since 2026-01-15: The payments API v0 is switched off; refunds go through the current API\. Use issue_refund instead; calls of issue_refund_v0 are refused from 2099-06-30\.\n/,
    );
    expect(await descriptionOf(run, "issue_refund")).not.toContain("Deprecated");

    const { client } = await connect(run.token);
    try {
      const result = await client.callTool({ name: "issue_refund_v0", arguments: smallRefund("B2002") });
      expect(textOf(result)).toMatch(
        /^Deprecated since 2026-01-15: .* Use issue_refund instead; .*issue_refund_v0 succeeded/,
      );
      expect(envelopeOf(result).deprecation).toEqual(NOTICE);
    } finally {
      await client.close();
    }
  });

  it("is refused from its sunset on, pointing at its successor, and nothing is sent", async () => {
    const run = await openRun("globex", WIDE);
    const retired = { ...NOTICE, sunset: "2026-02-01" };
    deprecating(retired);
    const { status, headers, body } = await callTool(run, "issue_refund_v0", smallRefund("B2003"));
    expect(status).toBe(410);
    expect(body.error).toMatchObject({
      code: "tool_retired",
      recommended_next_action: "use_other_tool",
      side_effect_confirmed: false,
      details: { use_instead: "issue_refund", sunset: "2026-02-01" },
    });
    expect(body.error?.message).toContain("This call was not made; use issue_refund instead.");
    expect(headers.get("sunset")).toBe("Sun, 01 Feb 2026 00:00:00 GMT");
    expect(await refundsOfRun("B2003", run)).toHaveLength(0);
    // The successor answers as ever.
    expect((await callTool(run, "issue_refund", smallRefund("B2003"))).status).toBe(200);
  });

  it("shows on the health page who still calls it", async () => {
    const run = await openRun("globex", WIDE);
    deprecating(NOTICE);
    expect((await callTool(run, "issue_refund_v0", smallRefund("B2005"))).status).toBe(200);
    const operator = await signedInOperator("globex");
    const { status, html } = await operator.get("/console/health");
    expect(status).toBe(200);
    expect(html).toContain("Deprecated tools still called");
    expect(html).toContain('data-tool="support.issue_refund_v0"');
    expect(html).toContain(`href="/console/runs/${run.id}"`);
    // A tenant none of whose runs called it sees the tool, and no run.
    const acme = await signedInOperator("acme");
    const quiet = await acme.get("/console/health");
    expect(quiet.html).toContain("No run called it in the last 48 hours.");
  });
});
