import * as z from "zod";
import type { InputSchema, ToolSpec } from "../catalog/define-tool";
import type { FailureSpec, Problem } from "../wire/envelope";

export type Validation = { ok: true; args: Record<string, unknown> } | { ok: false; problems: Problem[] };

/**
 * Stage "validate": checks arguments against the tool's strict schema and turns every zod issue
 * into a problem that names the field, says what is wrong, and what is allowed.
 */
export function validateArguments(schema: InputSchema, args: unknown): Validation {
  const parsed = schema.safeParse(omitNullOptionals(schema, args), { reportInput: true });
  if (parsed.success) return { ok: true, args: parsed.data };
  return { ok: false, problems: problemsFromIssues(schema, parsed.error.issues) };
}

type OutputValidation = { ok: true; data: unknown } | { ok: false; failure: FailureSpec };

/**
 * Stage "validate", on the way out: the tool's output schema is a whitelist. Fields it does not
 * name are stripped before the model sees them; an answer that does not fit the contract is not
 * passed on at all.
 */
export function validateOutput(tool: ToolSpec, body: unknown): OutputValidation {
  const parsed = tool.output.safeParse(body);
  if (parsed.success) return { ok: true, data: parsed.data };
  return {
    ok: false,
    failure: {
      code: "terminal_error",
      message:
        "The upstream answered success with a result that does not match this tool's output contract, so it was withheld.",
      side_effect_confirmed: tool.side_effect === "read" ? false : null,
      recommended_next_action: tool.side_effect === "read" ? "escalate_to_human" : "reconcile",
    },
  };
}

/**
 * What the value being checked is called in problems: a tool's `args`, or a request's `body` or
 * `query` on the JSON routes (src/http/validation-hook.ts), which share this one problem builder.
 */
export interface ProblemSubject {
  /** The field name of the value itself: `args`, `body`, `query`. */
  root: string;
  /** Put before each field's path: `query.` for a parameter, nothing for `args` and `body`. */
  prefix: string;
  /** `expected <object>, got array` when the value itself is not an object. */
  object: string;
  objectHint: string;
  /** The hint of a field whose schema has no description. */
  fallbackHint: string;
}

export const TOOL_ARGUMENTS: ProblemSubject = {
  root: "args",
  prefix: "",
  object: "an object of arguments",
  objectHint: "Send args as a JSON object.",
  fallbackHint: "See the tool's input schema.",
};

/**
 * Turns zod issues (parsed with `reportInput: true`, which the reasons need) into problems that
 * name the field, say what is wrong and what is allowed: an unknown field with a did-you-mean, the
 * expected type, the allowed values.
 */
export function problemsFromIssues(
  schema: z.ZodType,
  issues: readonly z.core.$ZodIssue[],
  subject: ProblemSubject = TOOL_ARGUMENTS,
): Problem[] {
  return dedupe(issues.flatMap((issue) => problemsFor(schema, issue, subject)));
}

/**
 * OpenAI's strict function calling makes every property required, so an optional field is declared
 * nullable there and the model sends `null` to leave it out. `null` for an optional field that does
 * not accept null therefore means "absent": dropped before parsing, so it also derives the same
 * idempotency key as leaving the field out.
 */
export function omitNullOptionals(schema: z.ZodType, value: unknown): unknown {
  const inner = peel(schema);
  if (
    !(inner instanceof z.ZodObject) ||
    typeof value !== "object" ||
    value === null ||
    Array.isArray(value)
  ) {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const field = inner.shape[key] as z.ZodType | undefined;
    if (item === null && field instanceof z.ZodOptional && !field.safeParse(null).success) continue;
    out[key] = field ? omitNullOptionals(field, item) : item;
  }
  return out;
}

/** The fields a list of problems names, each once, in their order: a field may have several problems. */
export function problemFields(problems: readonly Problem[]): string[] {
  return [...new Set(problems.map((problem) => problem.field))];
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.field}\u0000${problem.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `items[0].sku` style paths; the root is `args` (or the subject's root). */
export function formatPath(path: readonly PropertyKey[], subject: ProblemSubject = TOOL_ARGUMENTS): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out === "" ? subject.root : `${subject.prefix}${out}`;
}

function describeValueType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && Number.isInteger(value)) return "integer";
  return typeof value;
}

/**
 * The schema at `path`, walking through optional and array wrappers, and into the first option of
 * a union that has the field.
 */
function schemaAt(root: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = root;
  for (const part of path) {
    current = peel(current);
    if (current instanceof z.ZodUnion && typeof part === "string") {
      current = (current.options as z.ZodType[])
        .map((option) => peel(option))
        .find((option) => option instanceof z.ZodObject && part in option.shape);
    }
    if (current instanceof z.ZodObject && typeof part === "string") {
      current = current.shape[part] as z.ZodType | undefined;
    } else if (current instanceof z.ZodArray && typeof part === "number") {
      current = current.element as z.ZodType;
    } else {
      return undefined;
    }
  }
  return current;
}

function peel(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (
    current instanceof z.ZodOptional ||
    current instanceof z.ZodNullable ||
    current instanceof z.ZodDefault
  ) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

function describe(schema: z.ZodType | undefined): string | undefined {
  return schema?.description ?? peel(schema)?.description;
}

function problemsFor(root: z.ZodType, issue: z.core.$ZodIssue, subject: ProblemSubject): Problem[] {
  const field = formatPath(issue.path, subject);
  const fieldSchema = schemaAt(root, issue.path);
  const description = describe(fieldSchema) ?? subject.fallbackHint;
  switch (issue.code) {
    case "invalid_type": {
      if (issue.path.length === 0) {
        return [
          {
            field,
            reason: `expected ${subject.object}, got ${describeValueType(issue.input)}`,
            hint: subject.objectHint,
          },
        ];
      }
      if (issue.input === undefined) return [{ field, reason: "missing required field", hint: description }];
      return [
        {
          field,
          reason: `expected ${issue.expected}, got ${describeValueType(issue.input)}`,
          hint: description,
        },
      ];
    }
    case "unrecognized_keys": {
      const holder = peel(schemaAt(root, issue.path));
      const valid = holder instanceof z.ZodObject ? Object.keys(holder.shape) : [];
      return issue.keys.map((key) => {
        const path = [...issue.path, key];
        const suggestion = closestField(key, valid);
        const didYouMean = suggestion ? `Did you mean "${suggestion}"? ` : "";
        return {
          field: formatPath(path, subject),
          reason: "unknown field",
          hint: `${didYouMean}Valid fields: ${valid.join(", ")}.`,
        };
      });
    }
    case "invalid_value":
      return [notAllowed(field, issue.input, issue.values, description)];
    case "too_small":
    case "too_big": {
      const bound = issue.code === "too_small" ? "at least" : "at most";
      const limit = Number(issue.code === "too_small" ? issue.minimum : issue.maximum);
      const unit =
        issue.origin === "string"
          ? " characters"
          : issue.origin === "array" || issue.origin === "set"
            ? " items"
            : "";
      const exclusive =
        issue.inclusive === false ? (issue.code === "too_small" ? "more than" : "less than") : bound;
      return [{ field, reason: `must be ${exclusive} ${limit}${unit}`, hint: description }];
    }
    case "invalid_format":
      return [{ field, reason: issue.message, hint: description }];
    case "not_multiple_of":
      return [{ field, reason: `must be a multiple of ${String(issue.divisor)}`, hint: description }];
    case "invalid_union":
      return unionProblems(root, issue, subject, field, description);
    case "invalid_key":
    case "invalid_element":
    case "custom":
      return [{ field, reason: issue.message, hint: description }];
    default:
      return [{ field, reason: "invalid value", hint: description }];
  }
}

/**
 * A value outside a fixed set (an enum, a literal, a union of them, a discriminator). Absent, it is
 * a missing field like any other, and the hint still lists what is allowed.
 */
function notAllowed(field: string, input: unknown, values: readonly unknown[], description: string): Problem {
  const allowed = `Allowed values: ${values.map((value) => JSON.stringify(value)).join(", ")}. ${description}`;
  if (input === undefined) return { field, reason: "missing required field", hint: allowed };
  return { field, reason: `${JSON.stringify(input)} is not an allowed value`, hint: allowed };
}

/**
 * A value no option of a union accepts, said as plainly as the options allow: a missing or wrong
 * discriminator, a value outside a set of literals, the wrong type among plain types, or else the
 * problems of the option it came closest to (the one with the fewest), located inside the value.
 */
function unionProblems(
  root: z.ZodType,
  issue: z.core.$ZodIssueInvalidUnion,
  subject: ProblemSubject,
  field: string,
  description: string,
): Problem[] {
  const options = "options" in issue ? issue.options : undefined;
  if (issue.discriminator !== undefined && options !== undefined) {
    const holder = issue.input;
    const value =
      typeof holder === "object" && holder !== null && !Array.isArray(holder)
        ? (holder as Record<string, unknown>)[issue.discriminator]
        : undefined;
    return [notAllowed(field, value, options, description)];
  }
  const branches = issue.errors;
  const atRoot = (branch: readonly z.core.$ZodIssue[]) =>
    branch.length === 1 && branch[0] !== undefined && branch[0].path.length === 0 ? branch[0] : undefined;
  const rootIssues = branches.map(atRoot);
  const values = rootIssues.flatMap((branch) => (branch?.code === "invalid_value" ? branch.values : []));
  const types = rootIssues.flatMap((branch) => (branch?.code === "invalid_type" ? [branch.expected] : []));
  const allRoot = branches.length > 0 && rootIssues.every((branch) => branch !== undefined);
  if (allRoot && values.length > 0 && types.length === 0) {
    return [notAllowed(field, issue.input, values, description)];
  }
  if (issue.input === undefined) {
    const forms = types.length > 0 && allRoot ? `One of: ${[...new Set(types)].join(", ")}. ` : "";
    return [{ field, reason: "missing required field", hint: `${forms}${description}` }];
  }
  if (allRoot && types.length === branches.length) {
    return [
      {
        field,
        reason: `expected ${[...new Set(types)].join(" or ")}, got ${describeValueType(issue.input)}`,
        hint: description,
      },
    ];
  }
  const closest = [...branches].sort((a, b) => a.length - b.length)[0];
  if (!closest || closest.length === 0) return [{ field, reason: issue.message, hint: description }];
  return closest.flatMap((inner) =>
    problemsFor(root, { ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue, subject),
  );
}

/** The valid field a near miss was probably meant to be: `orderId` → `order_id`. */
export function closestField(key: string, valid: readonly string[]): string | undefined {
  const normal = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, "");
  const target = normal(key);
  let best: { name: string; distance: number } | undefined;
  for (const name of valid) {
    const distance = normal(name) === target ? 0 : levenshtein(target, normal(name));
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (!best) return undefined;
  return best.distance <= Math.max(1, Math.floor(best.name.length / 4)) ? best.name : undefined;
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
