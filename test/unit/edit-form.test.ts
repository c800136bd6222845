import { describe, expect, it } from "vitest";
import * as z from "zod";
import { argsFromForm, editFieldsOf, fieldOfProblem, formValuesOf } from "../../src/console/edit-form";
import { catalog } from "../../src/tools";

function toolOf(namespace: string, name: string) {
  const tool = catalog.find(namespace, name);
  if (!tool) throw new Error(`no ${namespace}.${name}`);
  return tool;
}

describe("the edit form's inputs", () => {
  it("types each top-level argument from the tool's input schema, in its declared order", () => {
    const fields = editFieldsOf(toolOf("support", "issue_refund"));
    expect(fields.map(({ name, kind, required }) => ({ name, kind, required }))).toEqual([
      { name: "order_id", kind: "string", required: true },
      { name: "amount_cents", kind: "integer", required: true },
      { name: "reason", kind: "enum", required: true },
    ]);
    expect(fields[1]).toMatchObject({ min: 1, max: 1_000_000 });
    expect(fields[2]?.options).toEqual(["user_cancel", "out_of_stock", "price_error"]);
    // An address is an object: edited as JSON.
    const reroute = editFieldsOf(toolOf("shipping", "reroute_shipment"));
    expect(reroute.find((field) => field.name === "destination")?.kind).toBe("json");
    const optional = editFieldsOf(toolOf("support", "draft_customer_email"));
    expect(optional.find((field) => field.name === "notes")).toMatchObject({
      required: false,
      max_length: 500,
    });
    const flags = editFieldsOf({
      input: z.strictObject({ notify: z.boolean(), ratio: z.number().nullable() }),
    });
    expect(flags.map(({ kind, options }) => ({ kind, options }))).toEqual([
      { kind: "boolean", options: ["true", "false"] },
      { kind: "number", options: [] },
    ]);
  });

  it("fills the inputs with the call's arguments: strings as they are, everything else as JSON", () => {
    const fields = editFieldsOf(toolOf("shipping", "reroute_shipment"));
    const values = formValuesOf(fields, { order_id: "A1002", destination: { city: "Lyon" } });
    expect(values).toEqual({ order_id: "A1002", destination: '{\n  "city": "Lyon"\n}', reason: "" });
  });

  it("reads a posted form by the argument types, and passes on as text what does not read, for the schema to refuse", () => {
    const fields = editFieldsOf(toolOf("support", "issue_refund"));
    const form = { "args.order_id": "A1003", "args.amount_cents": " 600 ", "args.reason": "user_cancel" };
    expect(argsFromForm(fields, form).args).toEqual({
      order_id: "A1003",
      amount_cents: 600,
      reason: "user_cancel",
    });
    const words = argsFromForm(fields, { ...form, "args.amount_cents": "six hundred" });
    expect(words.args.amount_cents).toBe("six hundred");
    expect(words.values.amount_cents).toBe("six hundred");
    // An empty number is a missing argument (the schema says it is required), not zero.
    expect(argsFromForm(fields, { ...form, "args.amount_cents": "" }).args).not.toHaveProperty(
      "amount_cents",
    );

    const email = editFieldsOf(toolOf("support", "draft_customer_email"));
    const drafted = argsFromForm(email, {
      "args.customer_id": "C100",
      "args.template": "apology",
      "args.notes": "",
    });
    expect(drafted.args).toEqual({ customer_id: "C100", template: "apology" });

    const reroute = editFieldsOf(toolOf("shipping", "reroute_shipment"));
    expect(argsFromForm(reroute, { "args.destination": '{"city":"Lyon"}' }).args.destination).toEqual({
      city: "Lyon",
    });
    expect(argsFromForm(reroute, { "args.destination": "{not json" }).args.destination).toBe("{not json");
  });

  it("places a problem beside the input of its first path segment, or nowhere", () => {
    const fields = editFieldsOf(toolOf("shipping", "reroute_shipment"));
    const at = (field: string) => fieldOfProblem(fields, { field, reason: "", hint: "" });
    expect(at("destination.city")).toBe("destination");
    expect(at("args.order_id")).toBe("order_id");
    expect(at("note")).toBeNull();
    expect(at("")).toBeNull();
  });
});
