import { describe, expect, it } from "vitest";
import { catalog } from "../../src/tools";
import { callTool, KEYS, openRun, request, sandbox, sandboxRequests, type TestRun } from "./helpers";
import { connect, envelopeOf } from "./mcp-client";

/**
 * The shipping namespace, declared as data in catalog/shipping.yaml, through the public interface:
 * every guarantee the code tools have, proven against the sandbox's own shipment records.
 */

interface Shipment {
  order_id: string;
  status: string;
  destination: { name: string; street: string; city: string; postal_code: string; country: string };
  events: Array<{ note: string }>;
  version: number;
}

const shipping = (tenant: "acme" | "globex" = "acme", limits?: Record<string, number>) =>
  openRun(tenant, { namespace: "shipping", ...(limits ? { limits } : {}) });

async function shipmentAtSource(tenant: string, orderId: string): Promise<Shipment | undefined> {
  const { shipments } = await sandbox<{ shipments: Array<Shipment & { tenant: string }> }>(
    `/_admin/shipments?tenant=${tenant}`,
  );
  return shipments.find((shipment) => shipment.order_id === orderId);
}

const destination = (city: string) => ({
  name: "Ada Lovelace",
  street: "12 Analytical Row",
  city,
  postal_code: "02139",
  country: "US",
});

const reroutesOf = async (run: TestRun) =>
  (await sandboxRequests(run.id)).filter((entry) => entry.path.endsWith("/shipment/reroute"));

describe("shipping, a namespace declared as data", () => {
  it("reads a shipment with names and streets masked and the tracking notes fenced", async () => {
    const run = await shipping();
    const { body } = await callTool(run, "lookup_shipment", { order_id: "A1002" });
    expect(body.outcome, JSON.stringify(body.error)).toBe("success");
    const data = body.data as Shipment;
    const source = await shipmentAtSource("acme", "A1002");
    expect(data.destination.city).toBe(source?.destination.city);
    expect(data.destination.name).not.toBe(source?.destination.name);
    expect(data.destination.street).not.toBe(source?.destination.street);
    for (const event of data.events) expect(event.note).toMatch(/^\[untrusted content [0-9a-f]{12}: /);
  });

  it("refuses another tenant's order before anything is sent", async () => {
    const run = await shipping("globex");
    const { body } = await callTool(run, "lookup_shipment", { order_id: "A1001" });
    expect(body.error?.code).toBe("permission_error");
    expect(body.error?.problems?.[0]?.reason).toBe("A1001 does not belong to this tenant");
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("refuses an unknown argument with a did-you-mean, as code tools do", async () => {
    const run = await shipping();
    const { body } = await callTool(run, "lookup_shipment", { order_id: "A1002", orderid: "A1002" });
    expect(body.error?.code).toBe("validation_error");
    expect(JSON.stringify(body.error?.problems)).toContain("orderid");
  });

  it("reroutes once under a derived key, replays the repeat, and reads the effect back", async () => {
    const run = await shipping();
    const args = { order_id: "A1002", destination: destination("Cambridge"), reason: "customer moved" };
    const first = await callTool(run, "reroute_shipment", args);
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    expect(first.body.idempotency_key).toMatch(/\S/);
    const again = await callTool(run, "reroute_shipment", args);
    expect(again.body.replayed).toBe(true);
    expect(again.body.idempotency_key).toBe(first.body.idempotency_key);
    const sent = await reroutesOf(run);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.idempotency_key).toBe(first.body.idempotency_key);
    const source = await shipmentAtSource("acme", "A1002");
    expect(source).toMatchObject({ status: "rerouted", destination: { city: "Cambridge" } });
    // The postcondition's read went out with lookup_shipment's own credential.
    expect((await sandboxRequests(run.id)).some((entry) => entry.tool === "lookup_shipment")).toBe(true);
  });

  it("turns a reroute the carrier claimed but never kept into a silent_failure", async () => {
    const run = await shipping();
    const { body } = await callTool(
      run,
      "reroute_shipment",
      { order_id: "A1004", destination: destination("Oakland"), reason: "closer to work" },
      { "x-sandbox-fault": "silent_failure" },
    );
    expect(body.error?.code).toBe("silent_failure");
    expect(body.error?.message).toContain("destination.city");
    expect((await shipmentAtSource("acme", "A1004"))?.destination.city).toBe("San Francisco");
  });

  it("spends the run's write budget and refuses past it", async () => {
    const run = await shipping("globex", { max_writes: 1 });
    const first = await callTool(run, "reroute_shipment", {
      order_id: "B2002",
      destination: destination("Santa Clara"),
      reason: "customer asked",
    });
    expect(first.body.budget?.writes_left).toBe(0);
    const refused = await callTool(run, "reroute_shipment", {
      order_id: "B2002",
      destination: destination("Sunnyvale"),
      reason: "customer asked again",
    });
    expect(refused.body.error).toMatchObject({ code: "budget_exhausted", details: { limit: "max_writes" } });
    expect(await reroutesOf(run)).toHaveLength(1);
  });

  it("answers the same tools over MCP", async () => {
    const run = await shipping();
    const { client } = await connect(run.token);
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual(
      catalog
        .tools("shipping")
        .map((tool) => tool.name)
        .sort(),
    );
    const result = await client.callTool({ name: "lookup_shipment", arguments: { order_id: "A1003" } });
    const envelope = envelopeOf(result);
    expect(envelope.outcome).toBe("success");
    expect((envelope.data as Shipment).status).toBe("delivered");
    await client.close();
  });

  it.each(["openai", "openai-responses", "anthropic", "gemini", "mcp", "jsonschema"])(
    "exports its specs as %s",
    async (format) => {
      const { status, body } = await request(`/v1/tools?namespace=shipping&format=${format}`, {
        headers: { authorization: `Bearer ${KEYS.acme}` },
      });
      expect(status, JSON.stringify(body.error)).toBe(200);
      const text = JSON.stringify(body.data);
      expect(text).toContain("lookup_shipment");
      expect(text).toContain("reroute_shipment");
    },
  );

  it("says in the neutral spec what a reroute's dry run cannot show, and nothing of the kind for a read", async () => {
    const { body } = await request("/v1/tools?namespace=shipping&format=jsonschema", {
      headers: { authorization: `Bearer ${KEYS.acme}` },
    });
    const tools = (body.data as { tools: Array<{ name: string; dry_run: string | null }> }).tools;
    const byName = new Map(tools.map((tool) => [tool.name, tool.dry_run]));
    expect(byName.get("reroute_shipment")).toEqual(expect.stringMatching(/sandbox.*production/is));
    expect(byName.get("lookup_shipment")).toBeNull();
  });
});
