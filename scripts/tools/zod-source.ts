// A declared tool's input or output JSON Schema as zod source code, written into
// src/generated/catalog.ts by `npm run tools -- compile`, so the Worker builds declared
// schemas the way it builds code tools' and never converts JSON Schema when an isolate starts.
//
// Why our own generator rather than the json-schema-to-zod package: that package writes zod 3
// (`.strict()`, `z.string().datetime()`, objects that pass unknown keys through), and the catalog
// needs exactly what zod 4's `z.fromJSONSchema` built before, for the subset a declaration may use
// (the keywords scripts/tools/openapi-schema.mjs keeps): the same checks, descriptions and
// metadata, so specs in every format and validation problems do not change. Inputs are strict at
// every depth (an unknown field is refused with a did-you-mean); outputs are whitelists (unknown
// fields are stripped).

import { isLiteralValue, patternRegExp, undeclaredRequired } from "./schema-rules.mjs";

type JsonSchema = Record<string, unknown>;

/** A keyword the catalog cannot express, and where in the tool's declaration it sits. */
export class SchemaError extends Error {
  constructor(
    readonly at: string,
    message: string,
  ) {
    super(message);
  }
}

/** Inputs refuse unknown fields at every depth; outputs strip them. */
export type SchemaDirection = "input" | "output";

/** `format` as `z.fromJSONSchema` checks it; any other format is a plain string, as it was there. */
const FORMATS: Record<string, string> = {
  email: "z.email()",
  uri: "z.url()",
  "uri-reference": "z.url()",
  uuid: "z.uuid()",
  guid: "z.uuid()",
  "date-time": "z.iso.datetime({ offset: true })",
  date: "z.iso.date()",
  time: String.raw`z.regex(/^(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/)`,
  duration: "z.iso.duration()",
  hostname: "z.hostname()",
  ipv4: "z.ipv4()",
  ipv6: "z.ipv6()",
  mac: "z.mac()",
  cidr: "z.cidrv4()",
  "cidr-v6": "z.cidrv6()",
  base64: "z.base64()",
  base64url: "z.base64url()",
  e164: "z.e164()",
  credit_card: "z.creditCard()",
  iban: "z.iban()",
  jwt: "z.jwt()",
  emoji: "z.emoji()",
  nanoid: "z.nanoid()",
  cuid: "z.cuid()",
  cuid2: "z.cuid2()",
  ulid: "z.ulid()",
  xid: "z.xid()",
  ksuid: "z.ksuid()",
};

/** Keywords this generator turns into zod calls. */
const HANDLED = new Set([
  "$schema",
  "type",
  "enum",
  "const",
  "description",
  "default",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minLength",
  "maxLength",
  "pattern",
  "x-pattern-message",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
]);

/**
 * References, conditions, and alternatives in an input: a strict input or an output whitelist
 * cannot hold them (the importer refuses them too). An output's alternatives of distinct JSON types
 * are a union (`alternativesSource`). Any other keyword (title, examples, x-…) is documentation,
 * kept as zod metadata as `z.fromJSONSchema` kept it.
 */
const UNSUPPORTED = [
  "$ref",
  "$defs",
  "definitions",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "patternProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
  "prefixItems",
  "additionalItems",
  "contains",
  "minContains",
  "maxContains",
  "unevaluatedItems",
  "unevaluatedProperties",
  "dependentSchemas",
  "dependentRequired",
  "readOnly",
  "contentSchema",
];

const literal = (value: unknown) => JSON.stringify(value);

const ALTERNATIVES = ["anyOf", "oneOf"] as const;
/** What may stand beside an output's alternatives: words about the value, not its shape. */
const BESIDE_ALTERNATIVES = new Set(["description", "title", "examples", "$comment"]);

/** The JSON type an alternative accepts (an integer is a number), or why it has none the union can tell apart. */
function jsonTypesOf(schema: JsonSchema): string[] | null {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types.every((type): type is string => typeof type === "string")) return null;
  return types.map((type) => (type === "integer" ? "number" : type));
}

/**
 * An output's `anyOf` or `oneOf` as a union of its alternatives, each a different JSON type (at
 * most one object, one list, one string…). A whitelist strips what an object does not declare, and
 * a union takes the first alternative a value fits: two objects would let the first strip the
 * fields of the second. So alternatives of one type are refused; merge them into one schema (the
 * importer does: openapi-alternatives.mjs). `oneOf`'s "exactly one" is what distinct types give.
 */
function alternativesSource(schema: JsonSchema, at: string, indent: string): string {
  const keywords = ALTERNATIVES.filter((keyword) => keyword in schema);
  const [keyword] = keywords;
  if (keyword === undefined || keywords.length > 1) {
    throw new SchemaError(at, "anyOf beside oneOf is not supported in a declaration");
  }
  const beside = Object.keys(schema).filter((key) => key !== keyword && !BESIDE_ALTERNATIVES.has(key));
  if (beside.length > 0) {
    throw new SchemaError(
      at,
      `${beside.join(", ")} beside ${keyword} is not supported: put each alternative's keywords inside it`,
    );
  }
  const options = schema[keyword];
  if (!Array.isArray(options) || options.length === 0) {
    throw new SchemaError(`${at}.${keyword}`, "must list at least one schema");
  }
  const seen = new Map<string, number>();
  const sources = options.map((option, index) => {
    const where = `${at}.${keyword}[${index}]`;
    const types = isSchema(option) ? jsonTypesOf(option) : null;
    if (types === null || types.length === 0) {
      throw new SchemaError(where, "each alternative names its JSON type (type: object, string, …)");
    }
    for (const type of types) {
      const earlier = seen.get(type);
      if (earlier !== undefined) {
        throw new SchemaError(
          where,
          `${keyword}[${earlier}] is of type ${type} too: a whitelist would keep only the fields of the first a value fits; merge them into one schema`,
        );
      }
      seen.set(type, index);
    }
    return schemaSource(option, "output", where, indent);
  });
  return sources.length === 1 ? (sources[0] ?? "z.never()") : `z.union([${sources.join(", ")}])`;
}

/**
 * The name generated code calls src/core/canonical-json.ts's canonicalJson by: the compiled module
 * imports it when a schema uses it, and `evaluateSchemas` hands it in.
 */
export const CANONICAL_JSON = "canonicalJson";

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The pattern as a regex literal, read as JSON Schema reads it (schema-rules.mjs); refused, located, when it is none. */
function regexLiteral(pattern: string, at: string): string {
  const regex = patternRegExp(pattern);
  if (regex === null)
    throw new SchemaError(`${at}.pattern`, `${literal(pattern)} is not a regular expression`);
  return `/${regex.source}/${regex.flags}`;
}

/** An enum or const value as literal source; an object or a list is refused (schema-rules.mjs). */
function literalValue(value: unknown, at: string): string {
  if (!isLiteralValue(value)) {
    throw new SchemaError(
      at,
      `${literal(value)} cannot be an allowed value: enum and const values are strings, numbers, booleans or null`,
    );
  }
  return literal(value);
}

function enumSource(values: unknown[], at: string): string {
  const literals = values.map((value, index) => literalValue(value, `${at}.enum[${index}]`));
  if (literals.length === 0) return "z.never()";
  if (literals.length === 1) return `z.literal(${literals[0]})`;
  if (values.every((value) => typeof value === "string")) return `z.enum([${literals.join(",")}])`;
  return `z.union([${literals.map((value) => `z.literal(${value})`).join(", ")}])`;
}

function stringSource(schema: JsonSchema, at: string): string {
  let source = "z.string()";
  const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
  if (format) source += `.check(${format})`;
  if (typeof schema.minLength === "number") source += `.min(${schema.minLength})`;
  if (typeof schema.maxLength === "number") source += `.max(${schema.maxLength})`;
  if (typeof schema.pattern === "string" && schema.pattern !== "") {
    // JSON Schema has no word for what a mismatch means; the model reads this one instead of the regex.
    const message = schema["x-pattern-message"];
    const said = typeof message === "string" && message !== "" ? `, ${literal(message)}` : "";
    source += `.regex(${regexLiteral(schema.pattern, at)}${said})`;
  }
  return source;
}

function numberSource(schema: JsonSchema, integer: boolean): string {
  let source = integer ? "z.number().int()" : "z.number()";
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = schema;
  // Draft 4's boolean exclusive bounds turn the bound itself exclusive, as fromJSONSchema reads them.
  if (typeof minimum === "number" && exclusiveMinimum !== true) source += `.min(${minimum})`;
  if (typeof maximum === "number" && exclusiveMaximum !== true) source += `.max(${maximum})`;
  if (typeof exclusiveMinimum === "number") source += `.gt(${exclusiveMinimum})`;
  else if (exclusiveMinimum === true && typeof minimum === "number") source += `.gt(${minimum})`;
  if (typeof exclusiveMaximum === "number") source += `.lt(${exclusiveMaximum})`;
  else if (exclusiveMaximum === true && typeof maximum === "number") source += `.lt(${maximum})`;
  if (typeof multipleOf === "number") source += `.multipleOf(${multipleOf})`;
  return source;
}

function objectSource(schema: JsonSchema, direction: SchemaDirection, at: string, indent: string): string {
  if (isSchema(schema.additionalProperties)) {
    throw new SchemaError(at, "additionalProperties as a schema (a map) is not supported");
  }
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  // An input refuses every field its properties do not declare, so a required one that they do not
  // declare could never be sent; an output keeps only declared fields, so there it means nothing.
  const undeclared = undeclaredRequired(schema);
  if (direction === "input" && undeclared.length > 0) {
    throw new SchemaError(
      `${at}.required`,
      `${undeclared.map((name) => literal(name)).join(", ")} required but not among the properties, so no call could send it`,
    );
  }
  const inner = `${indent}  `;
  const fields = Object.entries(properties).map(([name, child]) => {
    const value = schemaSource(child, direction, `${at}.properties.${name}`, inner);
    return `${inner}${literal(name)}: ${value}${required.has(name) ? "" : ".optional()"},\n`;
  });
  const factory = direction === "input" ? "z.strictObject" : "z.object";
  return fields.length === 0 ? `${factory}({})` : `${factory}({\n${fields.join("")}${indent}})`;
}

function arraySource(schema: JsonSchema, direction: SchemaDirection, at: string, indent: string): string {
  if (Array.isArray(schema.items))
    throw new SchemaError(`${at}.items`, "a tuple (items as a list) is not supported");
  const element =
    schema.items === undefined ? "z.any()" : schemaSource(schema.items, direction, `${at}.items`, indent);
  let source = `z.array(${element})`;
  if (typeof schema.minItems === "number") source += `.min(${schema.minItems})`;
  if (typeof schema.maxItems === "number") source += `.max(${schema.maxItems})`;
  // An output's objects lose their undeclared fields before a check could compare them, and a
  // repeated item harms no one reading the result: only an input's items must be unique.
  if (schema.uniqueItems === true && direction === "input") {
    // Equal as JSON Schema compares: objects whatever their key order, 1 and 1.0 alike.
    source += `.refine((items) => new Set(items.map((item) => ${CANONICAL_JSON}(item))).size === items.length, "Array items must be unique")`;
  }
  return source;
}

/** The schema of one `type`, without its description or metadata. */
function baseSource(schema: JsonSchema, direction: SchemaDirection, at: string, indent: string): string {
  if (Array.isArray(schema.enum)) return enumSource(schema.enum, at);
  if (schema.const !== undefined) return `z.literal(${literalValue(schema.const, `${at}.const`)})`;
  const { type } = schema;
  if (Array.isArray(type)) {
    // `type: [string, "null"]` is how a declaration says nullable (the importer writes OpenAPI 3.0's
    // `nullable: true` so): each type keeps the schema's other keywords. One type and null is that
    // type `.nullable()`, as a code tool writes it, so the catalog's rules still see its strings.
    const others = type.filter((one) => one !== "null");
    if (others.length === 1 && type.length === 2) {
      return `${baseSource({ ...schema, type: others[0] }, direction, at, indent)}.nullable()`;
    }
    const options = type.map((one) => baseSource({ ...schema, type: one }, direction, at, indent));
    if (options.length === 0) return "z.never()";
    return options.length === 1 ? (options[0] ?? "z.never()") : `z.union([${options.join(", ")}])`;
  }
  switch (type) {
    case undefined:
      return "z.any()";
    case "string":
      return stringSource(schema, at);
    case "number":
    case "integer":
      return numberSource(schema, type === "integer");
    case "boolean":
      return "z.boolean()";
    case "null":
      return "z.null()";
    case "object":
      return objectSource(schema, direction, at, indent);
    case "array":
      return arraySource(schema, direction, at, indent);
    default:
      throw new SchemaError(at, `unsupported type ${literal(type)}`);
  }
}

/**
 * One JSON Schema as a zod expression, in the order `z.fromJSONSchema` applies keywords: the type's
 * checks, then the default, then metadata, then the description. Throws, naming the schema's
 * location, on a keyword the catalog cannot express.
 */
export function schemaSource(schema: unknown, direction: SchemaDirection, at: string, indent = ""): string {
  if (typeof schema === "boolean") return schema ? "z.any()" : "z.never()";
  if (!isSchema(schema)) throw new SchemaError(at, "a schema must be an object");
  const alternatives = direction === "output" && ALTERNATIVES.some((keyword) => keyword in schema);
  const unsupported = UNSUPPORTED.find(
    (keyword) =>
      keyword in schema && !(alternatives && (ALTERNATIVES as readonly string[]).includes(keyword)),
  );
  if (unsupported) throw new SchemaError(at, `${unsupported} is not supported in a declaration`);
  if (alternatives) {
    const source = alternativesSource(schema, at, indent);
    return typeof schema.description === "string" && schema.description !== ""
      ? `${source}.describe(${literal(schema.description)})`
      : source;
  }
  let source = baseSource(schema, direction, at, indent);
  if (schema.default !== undefined) source += `.default(${literal(schema.default)})`;
  const meta = Object.fromEntries(
    Object.entries(schema).filter(
      // fromJSONSchema also kept an array's uniqueItems as metadata, so specs still show it.
      ([key]) => !HANDLED.has(key) || (key === "uniqueItems" && schema.type === "array"),
    ),
  );
  if (Object.keys(meta).length > 0) source += `.meta(${literal(meta)})`;
  if (typeof schema.description === "string" && schema.description !== "") {
    source += `.describe(${literal(schema.description)})`;
  }
  return source;
}
