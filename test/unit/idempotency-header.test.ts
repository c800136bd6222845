import { describe, expect, it } from "vitest";
import * as z from "zod";
import { defineTool } from "../../src/catalog/define-tool";
import { buildRequest } from "../../src/machine/request";
import { catalog } from "../../src/tools";

const reserveWidget = (idempotencyHeader?: string) =>
  defineTool({
    name: "reserve_widget",
    namespace: "widgets",
    version: "1",
    title: "Reserve a widget",
    side_effect: "write",
    description: {
      does: "Reserves one widget for an order.",
      use_when: "The customer orders a widget, e.g. reserve_widget({widget_id: 'W1'}).",
      avoid_when: "You only want to know whether one is in stock.",
      side_effects: "Holds one widget. At most once per identical call.",
    },
    input: z.strictObject({ widget_id: z.string().describe("The widget id, such as W1.") }),
    output: z.object({ reservation_id: z.string() }),
    upstream: {
      binding: "WIDGETS_API",
      request: (args) => ({ method: "POST", path: "/reservations", body: { widget_id: args.widget_id } }),
      ...(idempotencyHeader
        ? {
            idempotency: {
              header: idempotencyHeader,
              honoured: true,
              basis: "declared" as const,
              retention_ms: null,
            },
          }
        : {}),
    },
    timeout_ms: 1_000,
    trusted_text: { reservation_id: "an id the widget API issues" },
    no_postcondition: "A test tool: nothing reads it back.",
  });

describe("the idempotency key's header", () => {
  it("is Idempotency-Key unless the upstream declares another, and carries the derived key", () => {
    const ids = { key: "idk_0123", callId: "call_1" };
    expect(buildRequest(reserveWidget(), { widget_id: "W1" }, ids).headers["idempotency-key"]).toBe(
      "idk_0123",
    );
    const declared = buildRequest(reserveWidget("X-Request-Key"), { widget_id: "W1" }, ids).headers;
    expect(declared["x-request-key"]).toBe("idk_0123");
    expect(declared["idempotency-key"]).toBeUndefined();
  });

  it("is the one each declared upstream names: the shipping catalog's is Idempotency-Key", () => {
    const reroute = catalog.find("shipping", "reroute_shipment");
    expect(reroute?.upstream?.idempotency?.header).toBe("Idempotency-Key");
  });
});
