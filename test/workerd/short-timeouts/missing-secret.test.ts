import { describe, expect, it } from "vitest";
import { callTool, openRun, sandbox, traceOf } from "../helpers";
import { UNSET_SECRETS } from "./catalog";

/**
 * A tool whose declared static header names a secret the deployment never set (catalog.ts): its
 * call answers a configuration error naming the secret, and nothing leaves the proxy, neither the
 * request nor the proxy's own JWT in the header's place.
 */

/** Every request the sandbox's upstreams received, whoever sent it and whatever they answered. */
async function sandboxRequestCount(): Promise<number> {
  return (await sandbox<{ requests: unknown[] }>("/_admin/requests")).requests.length;
}

describe("a declared secret that is not set", () => {
  it.each([
    [
      "an HTTP API",
      "shipping.lookup_shipment_keyed",
      { order_id: "A1002" },
      UNSET_SECRETS.http,
      "SHIPMENTS_API",
    ],
    [
      "an MCP server",
      "helpdesk.search_articles_keyed",
      { query: "password" },
      UNSET_SECRETS.mcp,
      "HELPDESK_MCP",
    ],
  ] as const)(
    "answers a call through %s with configuration_error naming it, and sends nothing",
    async (_what, ref, args, secret, upstream) => {
      const tool = ref.split(".")[1] ?? "";
      const run = await openRun("acme", { tools: [ref] });
      const before = await sandboxRequestCount();
      const { status, body } = await callTool(run, tool, args);
      expect(status).toBe(500);
      expect(body.outcome).toBe("terminal_failure");
      expect(body.error).toMatchObject({
        code: "configuration_error",
        retryable: false,
        side_effect_confirmed: false,
        recommended_next_action: "escalate_to_human",
        details: { missing_secret: secret, upstream },
      });
      expect(body.error?.message).toContain(
        `the secret ${secret}, which is not set here, so nothing was sent`,
      );
      expect(await sandboxRequestCount()).toBe(before);
      const [entry] = await traceOf(run);
      expect(entry?.tool).toBe(tool);
      expect(entry?.error_code).toBe("configuration_error");
      expect(entry?.upstream_attempts).toEqual([]);

      // Asked again, it answers the same: nothing else is ever tried in the secret's place.
      const again = await callTool(run, tool, args);
      expect(again.body.error?.code).toBe("configuration_error");
      expect(await sandboxRequestCount()).toBe(before);
    },
  );
});
