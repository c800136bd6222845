// Credentials are never model inputs: what a model fills reaches its context, the trace and the
// logs, so an input field that reads like a credential is refused unless the tool says why it is
// not one (`not_credentials`), and a credential written into a request's literal headers or query
// is refused outright (it would sit in the catalog). The upstream's credential is declared once,
// from a Workers secret. Each problem names its field.
import type { ToolDeclaration } from "../../src/catalog/declaration";
import { looksLikeCredential } from "./credential-names";

type Report = (path: PropertyKey[], problem: string) => void;

interface InputField {
  /** The field's path as `not_credentials` names it: `filter.key`, `items[].token`. */
  path: string;
  /** Where it sits in the declaration. */
  at: PropertyKey[];
  name: string;
  schema: Record<string, unknown>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Every property of an input schema, at any depth, with its path. */
export function inputFields(schema: unknown, path = "", at: PropertyKey[] = ["input"]): InputField[] {
  if (!isRecord(schema)) return [];
  const fields: InputField[] = [];
  if (isRecord(schema.items)) fields.push(...inputFields(schema.items, `${path}[]`, [...at, "items"]));
  if (!isRecord(schema.properties)) return fields;
  for (const [name, child] of Object.entries(schema.properties)) {
    if (!isRecord(child)) continue;
    const childPath = path === "" ? name : `${path}.${name}`;
    const childAt = [...at, "properties", name];
    fields.push(
      { path: childPath, at: childAt, name, schema: child },
      ...inputFields(child, childPath, childAt),
    );
  }
  return fields;
}

/** A yes-or-no flag carries no secret, whatever its name says (`auth_required`). */
function carriesValue(schema: Record<string, unknown>): boolean {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return !types.every((type) => type === "boolean" || type === "null");
}

/** Whether an input field reads like a credential, by its name or its description. */
export function credentialLikeField(field: { name: string; schema: Record<string, unknown> }): boolean {
  return carriesValue(field.schema) && looksLikeCredential(field.name, field.schema.description);
}

export function credentialRules(tool: ToolDeclaration, report: Report): void {
  const fields = inputFields(tool.input);
  const declared = tool.not_credentials ?? {};
  for (const field of fields) {
    if (!credentialLikeField(field) || Object.hasOwn(declared, field.path)) continue;
    report(
      field.at,
      `input field "${field.path}" looks like a credential: a model would fill it, and it would reach the model's context and the trace. Declare the upstream's credential (static_header or static_query, from a Workers secret) and remove the field; or, if it is no credential, say why under not_credentials.${field.path}`,
    );
  }
  const paths = new Set(fields.map((field) => field.path));
  for (const path of Object.keys(declared)) {
    if (!paths.has(path)) {
      report(
        ["not_credentials", path],
        `"${path}" is not an input field; name a field of the input (a path such as filter.key)`,
      );
    }
  }
  const request = tool.request;
  const literals: [PropertyKey[], string][] = [
    ...Object.keys("headers" in request ? (request.headers ?? {}) : {}).map(
      (name): [PropertyKey[], string] => [["request", "headers", name], name],
    ),
    ...Object.entries("query" in request ? (request.query ?? {}) : {}).flatMap(
      ([name, value]): [PropertyKey[], string][] =>
        typeof value === "string" ? [[["request", "query", name], name]] : [],
    ),
  ];
  for (const [at, name] of literals) {
    if (!looksLikeCredential(name)) continue;
    report(
      at,
      `${name} looks like a credential written into the catalog; declare it as the upstream's credential (static_header or static_query) with a Workers secret, so its value lives only in the deploy's secrets`,
    );
  }
}
