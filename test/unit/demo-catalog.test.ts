import { describe, expect, it } from "vitest";
import * as z from "zod";
import { catalogProblems } from "../../src/catalog/catalog";
import { declaredNamespaces } from "../../src/generated/catalog";
import { catalog } from "../../src/tools";

const expected = {
  lookup_order: { side_effect: "read", args: ["order_id"] },
  search_refund_policy: { side_effect: "read", args: ["query"] },
  get_customer_profile: { side_effect: "read", args: ["customer_id"] },
  draft_customer_email: { side_effect: "draft", args: ["customer_id", "template", "order_id", "notes"] },
  create_internal_ticket: { side_effect: "write", args: ["customer_id", "priority", "summary"] },
  lookup_ticket: { side_effect: "read", args: ["ticket_id"] },
  issue_refund: { side_effect: "destructive", args: ["order_id", "amount_cents", "reason"] },
  send_customer_email: { side_effect: "destructive", args: ["draft_id", "draft_version"] },
  lookup_email: { side_effect: "read", args: ["email_id"] },
  // Built in to every namespace: pages through results too large to return inline.
  read_result_page: { side_effect: "read", args: ["handle", "cursor"] },
} as const;

describe("the served catalog", () => {
  it("passes every rule, the schema walks too, that the Worker leaves to compile", () => {
    expect(catalogProblems(catalog.all()).problems).toEqual([]);
  });

  it("gives read_result_page one input schema in every namespace, built once", () => {
    const inputs = catalog
      .namespaces()
      .map((namespace) => catalog.find(namespace, "read_result_page")?.input);
    expect(inputs.length).toBeGreaterThan(1);
    for (const input of inputs) expect(input).toBe(inputs[0]);
  });
});

describe("the demo support namespace", () => {
  it("has exactly the documented tools, side effects and arguments", () => {
    const tools = catalog.tools("support");
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(expected).sort());
    for (const tool of tools) {
      const spec = expected[tool.name as keyof typeof expected];
      expect(tool.side_effect).toBe(spec.side_effect);
      expect(Object.keys(tool.input.shape)).toEqual(spec.args);
    }
  });

  it("is declared as data (catalog/support.yaml), its built-in tool outside the ten-tool cap", () => {
    const declared = declaredNamespaces.find(({ file }) => file.namespace === "support");
    expect(declared?.file.tools.map((tool) => tool.name).sort()).toEqual(
      Object.keys(expected)
        .filter((name) => name !== "read_result_page")
        .sort(),
    );
  });

  it("offers the refund reasons as an enum", () => {
    const schema = z.toJSONSchema(catalog.find("support", "issue_refund")?.input ?? z.never(), {
      io: "input",
    });
    expect(JSON.stringify(schema)).toContain('"enum":["user_cancel","out_of_stock","price_error"]');
  });

  it("writes descriptions for a model, with an example and the side effects", () => {
    for (const tool of catalog.tools("support")) {
      expect(tool.description.use_when, tool.name).toMatch(/\(\{.*\}\)|e\.g\./);
      expect(tool.description.side_effects.length, tool.name).toBeGreaterThan(12);
    }
    expect(catalog.find("support", "lookup_order")?.description.use_when).toContain("A1001");
  });
});
