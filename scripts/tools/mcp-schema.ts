// A remote tool's JSON Schema in the form a declaration holds: references within the document
// inlined (one to another document is reported, never fetched), every object closed, every input
// property described. The conversion itself is the OpenAPI importer's (openapi-schema.mjs).
import { IMPORT_LIMITS } from "./openapi-read.mjs";
import { describeInputFields, toCatalogSchema } from "./openapi-schema.mjs";

type Report = (location: string, message: string) => void;

/**
 * The server's input schema as a strict declaration: `$defs` of the same document inlined, every
 * object closed (`additionalProperties: false`), every property described (a marker where the
 * server gave no words). A `$ref` to another document is reported, and the tool not drafted.
 */
export function strictInput(schema: unknown, report: Report): Record<string, unknown> | null {
  const resolved = inlineRefs(schema, schema, "inputSchema", report);
  if (resolved === undefined) return null;
  const input = toCatalogSchema(resolved, "input", "inputSchema", report);
  if (!input) return null;
  if (input.type !== "object") {
    report("inputSchema", "the input is not an object");
    return null;
  }
  closeObjects(input);
  describeInputFields(input);
  return input;
}

/**
 * A copy with `#/$defs/…` (and `#/definitions/…`) references replaced by what they name; undefined
 * when one cannot be, or when the copy would pass the importer's node limit (definitions that each
 * name the previous twice double at every level).
 */
export function inlineRefs(
  node: unknown,
  document: unknown,
  at: string,
  report: Report,
  seen: readonly string[] = [],
  budget = { nodes: IMPORT_LIMITS.maxDraftedNodes },
): unknown {
  if (budget.nodes-- <= 0) {
    if (budget.nodes === -1) {
      report(
        at,
        `the schema expands past ${IMPORT_LIMITS.maxDraftedNodes} nodes once its $refs are inlined (the importer's limit)`,
      );
    }
    return undefined;
  }
  if (Array.isArray(node)) {
    const items = node.map((item, index) =>
      inlineRefs(item, document, `${at}[${index}]`, report, seen, budget),
    );
    return items.includes(undefined) ? undefined : items;
  }
  if (typeof node !== "object" || node === null) return node;
  const { $ref, $defs: _defs, definitions: _definitions, ...rest } = node as Record<string, unknown>;
  if (typeof $ref === "string") {
    if (!$ref.startsWith("#/")) {
      report(`${at}.$ref`, `a $ref to an outside document (${$ref}) is not supported`);
      return undefined;
    }
    if (seen.includes($ref)) {
      report(`${at}.$ref`, `a recursive schema (${$ref}) is not supported`);
      return undefined;
    }
    const target = $ref
      .slice(2)
      .split("/")
      .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce<unknown>(
        (current, part) =>
          typeof current === "object" && current !== null
            ? (current as Record<string, unknown>)[part]
            : undefined,
        document,
      );
    if (target === undefined) {
      report(`${at}.$ref`, `${$ref} names nothing in the schema`);
      return undefined;
    }
    return inlineRefs({ ...(target as object), ...rest }, document, at, report, [...seen, $ref], budget);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    const inlined = inlineRefs(value, document, `${at}.${key}`, report, seen, budget);
    if (inlined === undefined) return undefined;
    out[key] = inlined;
  }
  return out;
}

function closeObjects(schema: Record<string, unknown>): void {
  if (schema.type === "object") schema.additionalProperties = false;
  const items = schema.items;
  if (typeof items === "object" && items !== null) closeObjects(items as Record<string, unknown>);
  const properties = schema.properties;
  if (typeof properties !== "object" || properties === null) return;
  for (const child of Object.values(properties)) {
    if (typeof child === "object" && child !== null) closeObjects(child as Record<string, unknown>);
  }
}
