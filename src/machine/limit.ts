import { INPUT_LIMITS } from "../core/input-limits";
import { RESERVED_KEYS } from "../core/reserved-keys";
import type { FailureSpec, Problem } from "../wire/envelope";
import type { CallRequest } from "./prepare";

/**
 * Stage "limit" at the edge: the structure of what the caller controls (depth, sizes, key counts).
 * It reaches no object: the run's and the tenant's call rates are the run's ledger's first check
 * (see ratelimit/run-gate.ts). A refused call is no dispatch and spends no budget.
 */
export function limitCall(request: CallRequest): FailureSpec | null {
  // Named from the body's root (`args.query`), as the REST door names every other field.
  const problems = structuralProblems({ args: request.args ?? {} });
  if (problems.length === 0) return null;
  return {
    code: "validation_error",
    message: "The arguments break the proxy's input limits. Fix the fields listed in problems.",
    problems,
    side_effect_confirmed: false,
  };
}

/** A body with thousands of violations gets the first few; the agent must fix those anyway. */
const MAX_PROBLEMS = 20;

/** `args.items[2].sku` style, like validation problems; the body itself is `body`. */
function child(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "body" ? key : `${path}.${key}`;
}

/**
 * Every structural limit a JSON value breaks, at most MAX_PROBLEMS of them. Recursion stops at the
 * depth limit, so a value nested 30,000 levels deep costs a handful of frames, not a stack overflow.
 */
export function structuralProblems(value: unknown): Problem[] {
  const problems: Problem[] = [];
  const visit = (node: unknown, path: string, depth: number): void => {
    if (problems.length >= MAX_PROBLEMS) return;
    if (typeof node === "string") {
      if (node.length > INPUT_LIMITS.string_chars)
        problems.push({
          field: path,
          reason: `a string of ${node.length} characters, over the limit`,
          hint: `Strings are at most ${INPUT_LIMITS.string_chars} characters; the tool's schema may allow fewer.`,
        });
      return;
    }
    if (typeof node === "number") {
      // JSON.parse turns 1e400 into Infinity, which no schema, digest or canonical form can represent.
      if (!Number.isFinite(node))
        problems.push({
          field: path,
          reason: "a number too large to represent",
          hint: "Numbers must be finite 64-bit floating point values.",
        });
      return;
    }
    if (typeof node !== "object" || node === null) return;
    if (depth > INPUT_LIMITS.depth) {
      problems.push({
        field: path,
        reason: `nested deeper than ${INPUT_LIMITS.depth} levels`,
        hint: `Objects and arrays nest at most ${INPUT_LIMITS.depth} levels, counting the body itself.`,
      });
      return;
    }
    if (Array.isArray(node)) {
      if (node.length > INPUT_LIMITS.array_items) {
        problems.push({
          field: path,
          reason: `an array of ${node.length} items, over the limit`,
          hint: `Arrays hold at most ${INPUT_LIMITS.array_items} items.`,
        });
        return;
      }
      for (const [index, item] of node.entries()) visit(item, child(path, index), depth + 1);
      return;
    }
    const keys = Object.keys(node);
    if (keys.length > INPUT_LIMITS.object_keys) {
      problems.push({
        field: path,
        reason: `an object with ${keys.length} fields, over the limit`,
        hint: `Objects have at most ${INPUT_LIMITS.object_keys} fields.`,
      });
      return;
    }
    for (const key of keys) {
      if (RESERVED_KEYS.has(key)) {
        problems.push({
          field: child(path, key),
          reason: "a reserved field name",
          hint: `No tool takes a field named ${key}; send the arguments themselves, with the fields the tool's schema lists.`,
        });
        continue;
      }
      if (key.length > INPUT_LIMITS.key_chars) {
        problems.push({
          field: child(path, `${key.slice(0, 32)}…`),
          reason: `a field name of ${key.length} characters, over the limit`,
          hint: `Field names are at most ${INPUT_LIMITS.key_chars} characters.`,
        });
        continue;
      }
      visit((node as Record<string, unknown>)[key], child(path, key), depth + 1);
    }
  };
  visit(value, "body", 1);
  return problems;
}
