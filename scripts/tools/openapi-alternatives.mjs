// Alternatives in an answer (`oneOf`, `anyOf`, a discriminator's variants, OpenAPI 3.0's `nullable`,
// 3.1's type lists) as the output whitelist can hold them: one schema per JSON type. Variants of
// one type merge, the objects' fields being the union of every variant's (required only where every
// variant requires them), so a whitelist keeps what any variant sends. Several types are an
// `anyOf` of one schema each, which the compiler turns into a union that cannot pick the wrong
// variant: a value has one JSON type (scripts/tools/zod-source.ts).

/** @typedef {Record<string, any>} Schema */

const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

/** The JSON type a literal has, as the catalog's schemas name it (an integer is a number). */
function literalType(value) {
  if (value === null) return "null";
  if (typeof value === "number") return "number";
  return typeof value;
}

/**
 * One converted schema as schemas of one JSON type each (`null` among them for a nullable one), or
 * null when it holds anything at all (no type, no literals, no fields, no items).
 *
 * @param {Schema} schema
 * @returns {Schema[] | null}
 */
function byType(schema) {
  if (Array.isArray(schema.anyOf)) {
    const parts = schema.anyOf.map(byType);
    return parts.some((part) => part === null) ? null : parts.flat();
  }
  const literals = [
    ...(Array.isArray(schema.enum) ? schema.enum : []),
    ...("const" in schema ? [schema.const] : []),
  ];
  let types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length === 0 && literals.length > 0) types = [...new Set(literals.map(literalType))];
  if (types.length === 0 && isObject(schema.properties)) types = ["object"];
  if (types.length === 0 && "items" in schema) types = ["array"];
  if (types.length === 0) return null;
  return types.map((type) => {
    if (type === "null") return { type: "null" };
    const { const: one, enum: many, ...rest } = schema;
    const values = literals.filter((value) => literalType(value) === (type === "integer" ? "number" : type));
    return { ...rest, type, ...(literals.length > 0 ? { enum: values } : {}) };
  });
}

const groupOf = (type) => (type === "integer" ? "number" : type);

/** Two or more schemas of the one JSON type `group`, as one. */
function mergeGroup(group, schemas) {
  const [first] = schemas;
  if (schemas.length === 1) return first;
  const description = schemas.find((schema) => typeof schema.description === "string")?.description;
  const described = description === undefined ? {} : { description };
  if (group === "object") {
    const names = [...new Set(schemas.flatMap((schema) => Object.keys(schema.properties ?? {})))];
    const properties = {};
    for (const name of names) {
      const variants = schemas.flatMap((schema) =>
        Object.hasOwn(schema.properties ?? {}, name) ? [schema.properties[name]] : [],
      );
      Object.defineProperty(properties, name, {
        value: mergeAlternatives(variants),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    const required = names.filter((name) =>
      schemas.every((schema) => Array.isArray(schema.required) && schema.required.includes(name)),
    );
    return { type: "object", ...described, properties, ...(required.length > 0 ? { required } : {}) };
  }
  if (group === "array") {
    return {
      type: "array",
      ...described,
      items: mergeAlternatives(schemas.map((schema) => schema.items ?? {})),
    };
  }
  // Scalars: listed values stay listed; any other difference leaves the plain type (a string with
  // no pattern is free text, so its trust is decided like any other).
  const type = group === "number" && schemas.every((schema) => schema.type === "integer") ? "integer" : group;
  if (schemas.every((schema) => Array.isArray(schema.enum))) {
    return { type, ...described, enum: [...new Set(schemas.flatMap((schema) => schema.enum))] };
  }
  const same = schemas.every((schema) => JSON.stringify(schema) === JSON.stringify(first));
  return same ? first : { type, ...described };
}

/**
 * Converted alternatives as the one schema a whitelist holds: their merge when they share a JSON
 * type (nullable when one is null), else an `anyOf` of one schema per type.
 *
 * @param {Schema[]} alternatives schemas already in the catalog's form
 * @returns {Schema}
 */
export function mergeAlternatives(alternatives) {
  const parts = alternatives.map(byType);
  if (parts.some((part) => part === null)) return {};
  const groups = new Map();
  let nullable = false;
  for (const schema of parts.flat()) {
    if (schema.type === "null") {
      nullable = true;
      continue;
    }
    const group = groupOf(schema.type);
    groups.set(group, [...(groups.get(group) ?? []), schema]);
  }
  const merged = [...groups].map(([group, schemas]) => mergeGroup(group, schemas));
  if (merged.length === 0) return { type: "null" };
  if (merged.length === 1) {
    const [only] = merged;
    return nullable ? { ...only, type: [only.type, "null"] } : only;
  }
  return { anyOf: [...merged, ...(nullable ? [{ type: "null" }] : [])] };
}

/**
 * A discriminator's property in a merged object: the variants name it, and when one does not, the
 * discriminator's mapping still lists its values.
 *
 * @param {Schema} merged
 * @param {unknown} discriminator
 */
export function withDiscriminator(merged, discriminator) {
  const name = isObject(discriminator) ? discriminator.propertyName : undefined;
  if (typeof name !== "string" || merged.type !== "object" || !isObject(merged.properties)) return merged;
  if (Object.hasOwn(merged.properties, name)) return merged;
  const mapping = isObject(discriminator.mapping) ? Object.keys(discriminator.mapping) : [];
  const property = mapping.length > 0 ? { type: "string", enum: mapping } : { type: "string" };
  return { ...merged, properties: { ...merged.properties, [name]: property } };
}
