import type * as z from "zod";
import type { CallRequest } from "../machine/prepare";
import { CallBodySchema } from "../wire/call-body";
import type { Problem } from "../wire/envelope";

/** The top-level fields of a call, from the one schema of the body (src/wire/call-body.ts). */
const CALL_FIELDS: readonly string[] = Object.keys(CallBodySchema.shape);

const TOOL_HINT = "The name of the tool to call, such as lookup_order.";
const ARGS_PROBLEM: Problem = {
  field: "args",
  reason: "expected an object",
  hint: 'The tool\'s arguments as a JSON object, such as {"order_id": "A1001"}.',
};

/**
 * Reads `{ "tool": "...", "args": { ... } }`. Anything else (not JSON, not an object, no tool,
 * args that are not an object, extra top-level fields) becomes a list of problems, so the ledger
 * can charge and trace it like any other dispatch and the agent gets a usable answer.
 */
export function parseCallBody(text: string): CallRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return malformed(null, undefined, [
      {
        field: "body",
        reason: "not valid JSON",
        hint: 'Send {"tool": "<tool name>", "args": {...}} as JSON.',
      },
    ]);
  }
  return readCallBody(body);
}

/**
 * The checks of a call body once it is a JSON value: the REST door's parsed body, or the MCP door's
 * `{ tool: params.name, args: params.arguments }`. An absent `args` is an empty object on both, so
 * both doors derive the same idempotency key for the same call.
 */
export function readCallBody(body: unknown): CallRequest {
  const parsed = CallBodySchema.safeParse(body);
  // The arguments as they came, not zod's copy: a copy assigns each key, and `__proto__` assigned
  // sets a prototype instead of a field, so the key the edge must refuse by name would vanish.
  if (parsed.success) {
    const { tool, args } = body as { tool: string; args?: Record<string, unknown> };
    return { ok: true, tool, args: args ?? {} };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return malformed(null, undefined, [
      {
        field: "body",
        reason: "expected a JSON object",
        hint: 'Send {"tool": "<tool name>", "args": {...}}.',
      },
    ]);
  }
  const record = body as Record<string, unknown>;
  const tool = typeof record.tool === "string" && record.tool.length > 0 ? record.tool : null;
  const args = record.args === undefined ? {} : record.args;
  return malformed(tool, args, problemsOf(parsed.error.issues, record));
}

/**
 * The schema's issues in words an agent can act on, tool first, then args, then each field the
 * body should not have: a zod message names types, not what to send instead.
 */
function problemsOf(issues: readonly z.core.$ZodIssue[], record: Record<string, unknown>): Problem[] {
  const problems: Problem[] = [];
  const at = (field: string) => issues.some((issue) => issue.path[0] === field);
  if (at("tool")) {
    problems.push(
      record.tool === undefined
        ? { field: "tool", reason: "missing required field", hint: TOOL_HINT }
        : { field: "tool", reason: "expected a non-empty string", hint: TOOL_HINT },
    );
  }
  if (at("args")) problems.push(ARGS_PROBLEM);
  for (const issue of issues) {
    if (issue.code !== "unrecognized_keys") continue;
    for (const field of issue.keys) {
      problems.push({
        field,
        reason: "unknown field",
        hint: `A call has only these fields: ${CALL_FIELDS.join(", ")}. Tool arguments go inside args.`,
      });
    }
  }
  return problems;
}

function malformed(tool: string | null, args: unknown, problems: Problem[]): CallRequest {
  return { ok: false, tool, args: args ?? null, problems };
}
