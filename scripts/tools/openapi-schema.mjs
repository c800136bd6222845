// OpenAPI schema objects (3.0 or 3.1, `$ref`s already resolved) to the JSON Schema a catalog
// declaration holds. What the catalog cannot express is reported with its location and left out,
// never passed through for the compiler to choke on or dropped without a word: an answer's field
// left out is also named, by its path, for a reviewer to account for (`omitted`).
import { mergeAlternatives, withDiscriminator } from "./openapi-alternatives.mjs";
import { IMPORT_LIMITS } from "./openapi-read.mjs";
import { isLiteralValue, patternRegExp, undeclaredRequired } from "./schema-rules.mjs";

/** Keywords a declaration keeps; everything else (examples, xml, discriminator, x-*) is documentation. */
const KEPT = [
  "type",
  "description",
  "enum",
  "const",
  "format",
  "pattern",
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "default",
];

const JSON_TYPES = ["string", "number", "integer", "boolean", "null", "object", "array"];

/**
 * Alternatives, conditions and tuples. An answer's alternatives (`oneOf`, `anyOf`) are carried
 * (openapi-alternatives.mjs); an input's are not: a model fills one strict shape.
 */
const UNSUPPORTED = ["oneOf", "anyOf", "not", "if", "patternProperties", "prefixItems"];
const ALTERNATIVES = ["oneOf", "anyOf"];

/**
 * @typedef {(location: string, message: string) => void} Report
 * @typedef {"input" | "output"} Direction
 * @typedef {{ nodes: number, spent: boolean }} Budget
 * @typedef {{ ancestors?: Set<unknown>, budget?: Budget, path?: string, omitted?: Map<string, string> }} Walk
 *   `ancestors`: schemas being converted above this one, to catch recursion; `budget`: the nodes the
 *   draft may still convert (shared by its schemas); `path`: the field's path (`events[].note`);
 *   `omitted`: where an answer's fields left out are collected, by path, with why
 */

/**
 * How many schema nodes one draft may convert. A document's recursive schemas are cycles, and a
 * walk that stops only where a path repeats could still take every path through a dense cycle.
 *
 * @returns {Budget}
 */
export function draftBudget() {
  return { nodes: IMPORT_LIMITS.maxDraftedNodes, spent: false };
}

/**
 * Sets `object[field]` as an own field, whatever its name: assigned, `__proto__` would set the
 * object's prototype instead, and the field would vanish from the draft.
 *
 * @param {Record<string, unknown>} object
 * @param {string} field
 * @param {unknown} value
 */
export function setField(object, field, value) {
  Object.defineProperty(object, field, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The catalog's form of `schema`, or null when it cannot be expressed (reported at `location`).
 * Input drops `readOnly` fields (the server sets them), output drops `writeOnly` ones. An
 * unexpressible optional property is left out of its object; a required input one sinks the object.
 *
 * @param {unknown} schema
 * @param {Direction} direction
 * @param {string} location
 * @param {Report} report
 * @param {Walk} [walk]
 * @returns {Record<string, unknown> | null}
 */
export function toCatalogSchema(schema, direction, location, report, walk = {}) {
  const { ancestors = new Set(), budget = draftBudget(), path = "", omitted } = walk;
  if (budget.nodes-- <= 0) {
    if (!budget.spent) {
      report(
        location,
        `the schemas drafted come to more than ${IMPORT_LIMITS.maxDraftedNodes} nodes (the importer's limit); this and what follows is not drafted`,
      );
    }
    budget.spent = true;
    return null;
  }
  if (!isObject(schema)) {
    report(location, "a schema must be an object");
    return null;
  }
  if (ancestors.has(schema)) {
    report(location, "a recursive schema is not supported");
    return null;
  }
  const carried = direction === "output" ? ALTERNATIVES : [];
  const unsupported = UNSUPPORTED.find((keyword) => keyword in schema && !carried.includes(keyword));
  if (unsupported) {
    report(location, `${unsupported} is not supported`);
    return null;
  }
  const inner = { ancestors: new Set(ancestors).add(schema), budget, path, omitted };
  if (ALTERNATIVES.some((keyword) => keyword in schema)) {
    return alternativesOf(schema, location, report, inner);
  }
  const merged = "allOf" in schema ? mergeAllOf(schema, direction, location, report, inner) : schema;
  if (!merged) return null;

  // A literal compares strings, numbers, booleans and null (schema-rules.mjs).
  const values = [
    ...(Array.isArray(merged.enum) ? merged.enum : []),
    ...("const" in merged ? [merged.const] : []),
  ];
  if (!values.every(isLiteralValue)) {
    report(location, "an enum or const holding an object or a list is not supported");
    return null;
  }

  const types = merged.type === undefined ? [] : Array.isArray(merged.type) ? merged.type : [merged.type];
  const unknownType = types.find((type) => !JSON_TYPES.includes(type));
  if (unknownType !== undefined) {
    report(location, `type ${JSON.stringify(unknownType)} is not a JSON Schema type`);
    return null;
  }
  if (typeof merged.pattern === "string" && patternRegExp(merged.pattern) === null) {
    report(location, `the pattern ${JSON.stringify(merged.pattern)} is not a regular expression`);
    return null;
  }

  /** @type {Record<string, unknown>} */
  const out = {};
  for (const keyword of KEPT) if (keyword in merged) out[keyword] = merged[keyword];
  normaliseOpenApi30(merged, out);
  const nullable = types.includes("null") || merged.nullable === true;

  const nullableObject = types.length === 2 && types.includes("object") && nullable;
  if (isObject(merged.properties) || out.type === "object" || nullableObject) {
    if (!isObject(merged.properties) && isObject(merged.additionalProperties)) {
      report(location, "a map (additionalProperties without properties) is not supported");
      return null;
    }
    const required = Array.isArray(merged.required) ? merged.required : [];
    // An input refuses undeclared fields, so a required one without a schema could never be sent.
    const undeclared = undeclaredRequired(merged);
    if (direction === "input" && undeclared.length > 0) {
      report(
        `${location}.required`,
        `${undeclared.join(", ")} required but not among the properties, so no call could send it`,
      );
      return null;
    }
    /** @type {Record<string, unknown>} */
    const properties = {};
    for (const [field, child] of Object.entries(isObject(merged.properties) ? merged.properties : {})) {
      if (isObject(child) && child[direction === "input" ? "readOnly" : "writeOnly"] === true) continue;
      /** @type {[string, string][]} */
      const reasons = [];
      const at = `${location}.properties.${field}`;
      const fieldPath = path === "" ? field : `${path}.${field}`;
      // An output field is named by dotted paths (`events[].note`) in trust and masks: a dot or a
      // bracket in its own name would read as the path's.
      const unnamed = direction === "output" && /[.[\]]/.test(field);
      if (unnamed)
        reasons.push([at, "a field name with a dot or a bracket cannot be named in the catalog's paths"]);
      const converted = unnamed
        ? null
        : toCatalogSchema(child, direction, at, (...reason) => reasons.push(reason), {
            ...inner,
            path: fieldPath,
          });
      const sinks = !converted && direction === "input" && required.includes(field);
      // An optional field or an output one is left out, and says so where it says why.
      const suffix = converted || sinks ? "" : "; left out of the draft";
      for (const [where, message] of reasons) report(where, `${message}${suffix}`);
      if (sinks) return null;
      if (converted) setField(properties, field, converted);
      else if (direction === "output" && omitted && reasons.length > 0) {
        omitted.set(fieldPath, reasons[0]?.[1] ?? "");
      }
    }
    out.type = nullable ? ["object", "null"] : "object";
    out.properties = properties;
    const kept = required.filter((field) => Object.hasOwn(properties, field));
    if (kept.length > 0) out.required = kept;
  } else if (out.type === "array" || "items" in merged) {
    const items = toCatalogSchema(merged.items ?? {}, direction, `${location}.items`, report, {
      ...inner,
      path: `${path}[]`,
    });
    if (!items) return null;
    out.items = items;
  }
  return out;
}

/**
 * An answer's `oneOf` or `anyOf` (with a discriminator, or 3.0's `nullable`, beside it), each
 * variant converted at its own location and merged into what a whitelist holds. Fields beside
 * the alternatives are shared by every variant, as `allOf` would say.
 */
function alternativesOf(schema, location, report, walk) {
  const keyword = ALTERNATIVES.find((one) => one in schema);
  const { oneOf: _one, anyOf: _any, discriminator, nullable, description, ...own } = schema;
  if (ALTERNATIVES.every((one) => one in schema)) {
    report(location, "oneOf beside anyOf is not supported");
    return null;
  }
  const variants = schema[keyword];
  if (!Array.isArray(variants) || variants.length === 0) {
    report(location, `a ${keyword} without alternatives is not supported`);
    return null;
  }
  const converted = [];
  for (const [index, variant] of variants.entries()) {
    const one = toCatalogSchema(variant, "output", `${location}.${keyword}[${index}]`, report, walk);
    if (!one) return null;
    converted.push(one);
  }
  const shared = Object.keys(own).filter((key) => key !== "type" || own.type !== "object");
  if (shared.some((key) => ["properties", "required", "allOf", "items"].includes(key))) {
    const base = toCatalogSchema(own, "output", location, report, walk);
    if (!base) return null;
    converted.push(base);
    if (base.type !== "object" || converted.some((one) => one.type !== "object")) {
      report(location, `fields beside a ${keyword} whose variants are not all objects are not supported`);
      return null;
    }
    const merged = mergeAlternatives(converted);
    merged.required = [...new Set([...(merged.required ?? []), ...(base.required ?? [])])];
    if (merged.required.length === 0) delete merged.required;
    return described(withDiscriminator(merged, discriminator), description);
  }
  const merged = withDiscriminator(mergeAlternatives(converted), discriminator);
  return described(nullable === true ? mergeAlternatives([merged, { type: "null" }]) : merged, description);
}

function described(schema, description) {
  return typeof description === "string" ? { ...schema, description } : schema;
}

/**
 * `allOf` of object schemas, as one object: the usual way a spec composes a base and an extension.
 * In an answer, a part that is itself alternatives (a base and its variants) is merged first.
 */
function mergeAllOf(schema, direction, location, report, walk) {
  const { allOf, ...own } = schema;
  const parts = [own, ...(Array.isArray(allOf) ? allOf : [])];
  const properties = {};
  const required = [];
  for (let [index, part] of parts.entries()) {
    if (!isObject(part)) continue;
    const at = `${location}.allOf[${index - 1}]`;
    if (direction === "output" && ALTERNATIVES.some((keyword) => keyword in part) && !("allOf" in part)) {
      part = toCatalogSchema(part, direction, at, report, walk);
      if (!part) return null;
    }
    if (part.type !== undefined && part.type !== "object") {
      report(at, "allOf of anything but objects is not supported");
      return null;
    }
    if ("allOf" in part || UNSUPPORTED.some((keyword) => keyword in part)) {
      report(at, "nested alternatives in allOf are not supported");
      return null;
    }
    Object.assign(properties, isObject(part.properties) ? part.properties : {});
    if (Array.isArray(part.required)) required.push(...part.required);
  }
  return { ...own, type: "object", properties, required: [...new Set(required)] };
}

/** 3.0's `nullable` and boolean exclusive bounds, in the 2020-12 form the catalog's schema uses. */
function normaliseOpenApi30(schema, out) {
  if (schema.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  for (const [flag, bound] of [
    ["exclusiveMinimum", "minimum"],
    ["exclusiveMaximum", "maximum"],
  ]) {
    if (typeof schema[flag] !== "boolean") continue;
    delete out[flag];
    if (schema[flag] && typeof schema[bound] === "number") {
      out[flag] = schema[bound];
      delete out[bound];
    }
  }
}

/**
 * Output paths (`events[].note`) of free-text strings: no enum, const, pattern or format, so any
 * text at all can arrive there. Each needs a trust decision in the declaration.
 *
 * @param {Record<string, unknown>} schema
 * @returns {string[]}
 */
export function freeTextPaths(schema, path = "") {
  if (Array.isArray(schema.anyOf)) {
    return [
      ...new Set(schema.anyOf.flatMap((variant) => (isObject(variant) ? freeTextPaths(variant, path) : []))),
    ];
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("string")) {
    const pinned = ["enum", "const", "pattern", "format"].some((keyword) => keyword in schema);
    return pinned ? [] : [path];
  }
  if (isObject(schema.items)) return freeTextPaths(schema.items, `${path}[]`);
  if (isObject(schema.properties)) {
    return Object.entries(schema.properties).flatMap(([field, child]) =>
      isObject(child) ? freeTextPaths(child, path === "" ? field : `${path}.${field}`) : [],
    );
  }
  return [];
}

/**
 * Gives every input property a description, a TODO where the document had none: a model picks
 * arguments by these, and `check` refuses the marker until a human writes one.
 *
 * @param {Record<string, unknown>} schema
 */
export function describeInputFields(schema, path = "") {
  if (isObject(schema.items)) describeInputFields(schema.items, `${path}[]`);
  if (!isObject(schema.properties)) return;
  for (const [field, child] of Object.entries(schema.properties)) {
    if (!isObject(child)) continue;
    const at = path === "" ? field : `${path}.${field}`;
    if (typeof child.description !== "string" || child.description.trim() === "") {
      child.description = `TODO(review): describe ${at}`;
    }
    describeInputFields(child, at);
  }
}

/** @returns {value is Record<string, any>} */
export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
