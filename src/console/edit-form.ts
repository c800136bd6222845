import type { ToolSpec } from "../catalog/define-tool";
import { inputJsonSchema, type JsonSchema } from "../specs/json-schema";
import type { Problem } from "../wire/envelope";

/** How an argument is typed in the edit form: chosen from the tool's input JSON Schema. */
export type EditKind = "integer" | "number" | "enum" | "boolean" | "string" | "json";

/** One top-level argument of a tool, as an input of the "Edit and approve" form. */
export interface EditField {
  name: string;
  kind: EditKind;
  required: boolean;
  /** The choices of an enum (as the form sends them). */
  options: string[];
  min: number | null;
  max: number | null;
  max_length: number | null;
  description: string | null;
}

/** What the edit form shows after a refused edit: the operator's own values and what was wrong. */
export interface EditState {
  /** By field name, exactly as the operator typed them. */
  values: Record<string, string>;
  problems: Problem[];
  /** The note the operator wrote with the edit. */
  note: string;
  /** The refusal asked to confirm a repeat of another run's effect: the form shows the box. */
  confirm: boolean;
}

/** The form field holding argument `name`. */
export const argInputName = (name: string) => `args.${name}`;

const NUMBER_TEXT = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

function kindOf(schema: JsonSchema): EditKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return "enum";
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((type) => type !== "null");
  if (types.length !== 1) return "json";
  switch (types[0]) {
    case "integer":
    case "number":
    case "boolean":
    case "string":
      return types[0];
    default:
      return "json";
  }
}

const numberOr = (value: unknown) => (typeof value === "number" ? value : null);

/**
 * The inputs of a tool's edit form, one per top-level argument in the order its schema declares
 * them: integers and numbers as number inputs, enums (and booleans) as selects, strings as text,
 * anything else (an address object, a list) as JSON in a text area.
 */
export function editFieldsOf(tool: Pick<ToolSpec, "input">): EditField[] {
  const schema = inputJsonSchema(tool);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(properties).map(([name, property]) => {
    const kind = kindOf(property);
    return {
      name,
      kind,
      required: required.has(name),
      options:
        kind === "enum"
          ? (property.enum as unknown[]).map(String)
          : kind === "boolean"
            ? ["true", "false"]
            : [],
      min: numberOr(property.minimum),
      max: numberOr(property.maximum),
      max_length: numberOr(property.maxLength),
      description: typeof property.description === "string" ? property.description : null,
    };
  });
}

/** The current arguments as the form's inputs show them: strings as they are, others as JSON. */
export function formValuesOf(
  fields: readonly EditField[],
  args: Record<string, unknown>,
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const field of fields) {
    const value = args[field.name];
    if (value === undefined) values[field.name] = "";
    else if (typeof value === "string") values[field.name] = value;
    else if (field.kind === "json") values[field.name] = JSON.stringify(value, null, 2);
    else values[field.name] = JSON.stringify(value);
  }
  return values;
}

/**
 * The arguments a posted edit form approves, and the values as typed (to show again if it is
 * refused). Each input is read as its field's type; what does not read as that type is passed on
 * as the text it is, so the tool's schema refuses it naming the field, like an agent's call. An
 * empty input of an optional argument leaves the argument out.
 */
export function argsFromForm(
  fields: readonly EditField[],
  form: Record<string, unknown>,
): { args: Record<string, unknown>; values: Record<string, string> } {
  const args: Record<string, unknown> = {};
  const values: Record<string, string> = {};
  for (const field of fields) {
    const posted = form[argInputName(field.name)];
    const raw = typeof posted === "string" ? posted : "";
    values[field.name] = raw;
    if (raw.trim() === "" && (!field.required || field.kind !== "string")) continue;
    args[field.name] = readAs(field, raw);
  }
  return { args, values };
}

function readAs(field: EditField, raw: string): unknown {
  const text = raw.trim();
  switch (field.kind) {
    case "integer":
    case "number":
      return NUMBER_TEXT.test(text) ? Number(text) : raw;
    case "boolean":
      return text === "true" ? true : text === "false" ? false : raw;
    case "json":
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return raw;
      }
    default:
      return raw;
  }
}

/**
 * The argument a problem of a refused edit is about: its first path segment (`destination.city`
 * is the `destination` input's). Null when it names no input of the form.
 */
export function fieldOfProblem(fields: readonly EditField[], problem: Problem): string | null {
  const [head = ""] = problem.field.replace(/^args\./, "").split(/[.[]/);
  return fields.some((field) => field.name === head) ? head : null;
}
