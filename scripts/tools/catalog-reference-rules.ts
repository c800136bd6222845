// The references a declaration makes beyond its arguments, checked so a typo is a located problem
// and never a silent "unknown" or empty text at run time: `{placeholders}` of the texts its
// policies and postcondition write, result pointers, and the paths its postcondition and decision
// context read in the observing tool's output (when that tool is declared in the same file).
import type { CatalogFile, ToolDeclaration } from "../../src/catalog/declaration";
import { placeholders, pointerTokens } from "../../src/catalog/templates";

type Report = (path: PropertyKey[], problem: string) => void;
type JsonSchema = Record<string, unknown>;

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The schema at a dotted path (a list's fields are named through it, as `refunds.refund_id`). */
function schemaAt(schema: unknown, path: string): JsonSchema | undefined {
  let current: unknown = schema;
  for (const name of path === "" ? [] : path.split(".")) {
    while (isSchema(current) && current.type === "array") current = current.items;
    const properties = isSchema(current) ? current.properties : undefined;
    if (!isSchema(properties) || !Object.hasOwn(properties, name)) return undefined;
    current = properties[name];
  }
  return isSchema(current) ? current : undefined;
}

/** Whether every field along a dotted path is required, so a valid value always holds the last. */
function requiredAlong(schema: unknown, path: string): boolean {
  let current: unknown = schema;
  for (const name of path === "" ? [] : path.split(".")) {
    if (!isSchema(current) || !isSchema(current.properties)) return false;
    const required = Array.isArray(current.required) ? current.required : [];
    if (!required.includes(name)) return false;
    current = current.properties[name];
  }
  return true;
}

/** `{name}` placeholders a text may use: fixed names, or `args.…`/`result.…` paths of the tool. */
function checkText(
  text: string | undefined,
  at: PropertyKey[],
  allowed: { names?: readonly string[]; tool?: ToolDeclaration },
  report: Report,
) {
  for (const name of placeholders(text ?? "")) {
    const [root = "", ...rest] = name.split(".");
    const path = rest.join(".");
    if (allowed.names?.includes(name)) continue;
    if (allowed.tool && root === "args" && schemaAt(allowed.tool.input, path)) continue;
    if (allowed.tool && root === "result" && schemaAt(allowed.tool.output.schema, path)) continue;
    const offered = [
      ...(allowed.names ?? []).map((one) => `{${one}}`),
      ...(allowed.tool ? ["{args.<input field>}", "{result.<output field>}"] : []),
    ];
    report(at, `{${name}} names nothing this text is given; it may use ${offered.join(", ") || "none"}`);
  }
}

const pointerPath = (pointer: string) => pointerTokens(pointer).join(".");

export function referenceRules(file: CatalogFile, tool: ToolDeclaration, report: Report): void {
  const observer = (name: string) => file.tools.find((candidate) => candidate.name === name);
  const observed = (name: string, path: string, at: PropertyKey[]) => {
    const read = observer(name);
    if (read && !schemaAt(read.output.schema, path)) {
      report(at, `"${path}" is not a field of ${name}'s output`);
    }
  };
  // A read's argument left empty names another resource (`/tickets/` for `/tickets/{id}`): it must
  // come from a field the call's input or its result always holds.
  const alwaysHeld = (pointer: string, source: "input" | "output", at: PropertyKey[], effect: string) => {
    const schema = source === "input" ? tool.input : tool.output.schema;
    const path = pointerPath(pointer);
    if (schemaAt(schema, path) && !requiredAlong(schema, path)) {
      report(at, `${pointer} must be a required field of this tool's ${source}: without it, ${effect}`);
    }
  };
  const resultRef = (value: unknown, at: PropertyKey[]) => {
    if (
      isSchema(value) &&
      typeof value.result === "string" &&
      !schemaAt(tool.output.schema, pointerPath(value.result))
    ) {
      report(at, `${value.result} names no field of this tool's output`);
    }
  };

  for (const [index, policy] of (tool.policies ?? []).entries()) {
    if ("max_from_setting" in policy) {
      const names = ["value", "limit", "field"];
      const at = ["policies", index, "max_from_setting"];
      checkText(policy.max_from_setting.reason, [...at, "reason"], { names }, report);
      checkText(policy.max_from_setting.hint, [...at, "hint"], { names }, report);
    } else if ("waive_approval_below" in policy) {
      const at = ["policies", index, "waive_approval_below", "reason"];
      checkText(policy.waive_approval_below.reason, at, { names: ["limit"] }, report);
    }
  }

  const postcondition = tool.postcondition;
  if (postcondition) {
    const at = ["postcondition"];
    for (const [name, ref] of Object.entries(postcondition.args)) {
      resultRef(ref, [...at, "args", name]);
      // Whose "not found" would be taken for the effect's absence.
      const [pointer, source] = "arg" in ref ? [ref.arg, "input" as const] : [ref.result, "output" as const];
      alwaysHeld(pointer, source, [...at, "args", name], "the check would read another resource");
    }
    for (const [path, expected] of Object.entries(postcondition.expect)) {
      observed(postcondition.tool, path, [...at, "expect", path]);
      if (!("contains" in expected)) {
        resultRef(expected, [...at, "expect", path]);
        continue;
      }
      const list = observer(postcondition.tool);
      if (list && schemaAt(list.output.schema, path)?.type !== "array") {
        report(
          [...at, "expect", path, "contains"],
          `"${path}" of ${postcondition.tool}'s output is not a list`,
        );
      }
      for (const [field, value] of Object.entries(expected.contains)) {
        observed(postcondition.tool, `${path}.${field}`, [...at, "expect", path, "contains", field]);
        resultRef(value, [...at, "expect", path, "contains", field]);
      }
    }
    checkText(postcondition.on_missing?.message, [...at, "on_missing", "message"], { tool }, report);
    checkText(postcondition.on_mismatch?.message, [...at, "on_mismatch", "message"], { tool }, report);
  }

  const context = tool.decision_context;
  if (context) {
    const at = ["decision_context"];
    for (const [name, ref] of Object.entries(context.args)) {
      alwaysHeld(ref.arg, "input", [...at, "args", name], "the read would name another resource");
    }
    if (context.money) observed(context.tool, context.money.currency, [...at, "money", "currency"]);
    for (const [index, fact] of context.facts.entries()) {
      const here = [...at, "facts", index];
      if ("path" in fact) observed(context.tool, fact.path, [...here, "path"]);
      if ("list" in fact) {
        observed(context.tool, fact.list.path, [...here, "list", "path"]);
        if (fact.list.sum !== undefined) {
          observed(context.tool, `${fact.list.path}.${fact.list.sum}`, [...here, "list", "sum"]);
        }
      }
      if (fact.format === "money" && !context.money) {
        report(
          [...here, "format"],
          "a money fact needs decision_context.money: where the read names its currency",
        );
      }
      const warning = "list" in fact ? undefined : fact.warning;
      if (warning && "above" in warning) {
        observed(context.tool, warning.above, [...here, "warning", "above"]);
        checkText(warning.text, [...here, "warning", "text"], { names: ["bound"] }, report);
      } else if (warning) {
        checkText(warning.text, [...here, "warning", "text"], {}, report);
      }
    }
  }
}
