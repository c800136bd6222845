import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { checkCatalog } from "../../scripts/tools/catalog-check";
import { evaluateSchemas, schemaSources } from "../../scripts/tools/catalog-module";
import { CatalogError, loadCatalog } from "../../src/catalog/catalog";
import { type CatalogFile, CatalogFileSchema } from "../../src/catalog/declaration";
import { declaredTool } from "../../src/catalog/declared-tool";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { DEFAULT_EFFECT_WINDOW_MS } from "../../src/catalog/effect-identity";
import { catalog } from "../../src/tools";

const root = fileURLToPath(new URL("../..", import.meta.url));
const DIR = "test/unit/fixtures/catalog/effects";

/** One run over every fixture; each file's problems are its own lines. */
const { problems } = checkCatalog(root, DIR);
const problemsOf = (file: string) =>
  problems.filter((problem) => problem.startsWith(`${DIR}/${file}.yaml: `));

function specOf(file: string, index: number): ToolSpec {
  const declared: CatalogFile = CatalogFileSchema.parse(
    parse(readFileSync(`${root}${DIR}/${file}.yaml`, "utf8")),
  );
  const tool = declared.tools[index];
  if (!tool) throw new Error(`${file} has no tools[${index}]`);
  const schemas = evaluateSchemas(schemaSources(tool));
  return declaredTool(declared, tool, () => schemas);
}

describe("a tool's effect identity and value, as declared", () => {
  it("maps a declaration to the tool's effect and value", () => {
    expect(problemsOf("good")).toEqual([]);
    const refund = specOf("good", 1);
    expect(refund.effect).toEqual({ fields: ["order_id"], window_ms: 3_600_000 });
    expect(refund.value).toEqual({ field: "amount_cents", currency: "USD", subject: "order_id" });
    expect(specOf("good", 0).effect).toBeNull();
    expect(specOf("good", 0).value).toBeNull();
  });

  it("gives a write without a declaration the tool and its whole arguments, for a day", () => {
    const plain = specOf("value_unknown", 1);
    expect(plain.effect).toEqual({ fields: null, window_ms: DEFAULT_EFFECT_WINDOW_MS });
  });

  it("declares issue_refund's identity (per user) and value in the shipped catalog, and a reroute's by its order's shipment", () => {
    const refund = catalog.find("support", "issue_refund");
    expect(refund?.effect).toEqual({
      fields: ["order_id"],
      window_ms: DEFAULT_EFFECT_WINDOW_MS,
      per_user: true,
    });
    expect(refund?.value).toEqual({ field: "amount_cents", currency: "USD", subject: "order_id" });
    expect(catalog.find("shipping", "reroute_shipment")?.effect?.fields).toEqual(["order_id"]);
    expect(catalog.find("helpdesk", "add_ticket_note")?.effect?.fields).toBeNull();
  });

  const refused: [file: string, expected: string][] = [
    [
      "identity_unknown",
      'tools[1].effect.identity[1]: tool "refund_identity_unknown": effect identity "order" is not an argument; its arguments are order_id, amount_cents, amount, note, urgent',
    ],
    ["identity_twice", 'tools[1].effect.identity[1]: names "order_id" twice'],
    [
      "identity_empty",
      "tools[1].effect.identity: names no argument; name at least one, such as [order_id], or leave effect out",
    ],
    ["window_short", "tools[1].effect.window_s: at least 60 seconds"],
    ["window_long", "tools[1].effect.window_s: at most 2592000 seconds (30 days)"],
    [
      "approval_sla_negative",
      "tools[1].approval.sla_s: at least 1 second: an approval's SLA cannot be negative or zero",
    ],
    [
      "value_unknown",
      'tools[1].value.field: tool "refund_value_unknown": value field "cents" is not an argument; its arguments are order_id, amount_cents, amount, note, urgent',
    ],
    [
      "value_string",
      `tools[1].value.field: tool "refund_value_string": value field "note" must be an integer argument (a currency's minor unit, such as cents); it is a string`,
    ],
    [
      "value_fraction",
      `tools[1].value.field: tool "refund_value_fraction": value field "amount" must be an integer argument (a currency's minor unit, such as cents); it is a number that allows fractions`,
    ],
    ["value_currency", "tools[1].value.currency: an ISO 4217 code such as USD"],
    [
      "subject_unknown",
      'tools[1].value.subject: tool "refund_subject_unknown": value subject "customer_id" is not an argument; its arguments are order_id, amount_cents, amount, note, urgent',
    ],
    [
      "subject_boolean",
      'tools[1].value.subject: tool "refund_subject_boolean": value subject "urgent" must be a string or integer argument; it is a boolean',
    ],
  ];
  for (const [file, expected] of refused) {
    it(`refuses ${file.replace("_", " ")} with one located problem and nothing else`, () => {
      expect(problemsOf(file)).toEqual([`${DIR}/${file}.yaml: ${expected}`]);
    });
  }

  it("holds a remote MCP tool to the same rules, against the input its pin reviewed", () => {
    expect(problemsOf("remote_effect")).toEqual([
      `${DIR}/remote_effect.yaml: tools[4].effect.identity[0]: tool "purge_conversation": effect identity "conversation" is not an argument; its arguments are conversation_id, reason`,
    ]);
  });

  it("refuses effect and value on a read tool, each at its key", () => {
    expect(problemsOf("read_effect")).toEqual([
      `${DIR}/read_effect.yaml: tools[0].effect: tool "lookup_read_effect": a read tool has no effect to identify; effect is for write and destructive tools`,
      `${DIR}/read_effect.yaml: tools[0].value: tool "lookup_read_effect": a read tool moves no value; value is for write and destructive tools`,
    ]);
  });
});

describe("a code tool's effect identity and value, when the catalog loads", () => {
  const refund = specOf("good", 1);
  const load = (spec: ToolSpec) => () => loadCatalog([specOf("good", 0), spec]);

  it("loads a tool whose identity and value name its arguments", () => {
    expect(load(refund)).not.toThrow();
  });

  it("refuses an identity naming no argument, naming the arguments it has", () => {
    expect(load({ ...refund, effect: { fields: ["order"], window_ms: 60_000 } })).toThrow(
      new CatalogError(
        'tool "refund_good": effect identity "order" is not an argument; its arguments are order_id, amount_cents, amount, note, urgent',
      ),
    );
  });

  it("refuses a window under a minute or in parts of a second", () => {
    const message = /effect window must be whole seconds from 60 to 2592000 \(30 days\); got/;
    expect(load({ ...refund, effect: { fields: null, window_ms: 59_000 } })).toThrow(message);
    expect(load({ ...refund, effect: { fields: null, window_ms: 60_500 } })).toThrow(message);
  });

  it("refuses a value that is not an integer argument, a bad currency and effect on a draft", () => {
    expect(load({ ...refund, value: { field: "amount", currency: "USD", subject: null } })).toThrow(
      /value field "amount" must be an integer argument .* it is a number that allows fractions/,
    );
    expect(load({ ...refund, value: { field: "amount_cents", currency: "usd", subject: null } })).toThrow(
      'value currency must be an ISO 4217 code such as USD; got "usd"',
    );
    const draft = { ...refund, side_effect: "draft" as const };
    expect(load(draft)).toThrow("a draft tool has no effect to identify");
  });
});
