import type { CallRequest } from "../pipeline/prepare";
import { CallBodySchema } from "../wire/call-body";
import type { Problem } from "../wire/envelope";

/** The top-level fields of a call, from the one schema of the body (src/wire/call-body.ts). */
const CALL_FIELDS: readonly string[] = Object.keys(CallBodySchema.shape);

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
  const problems: Problem[] = [];
  const tool = typeof record.tool === "string" && record.tool.length > 0 ? record.tool : null;
  if (record.tool === undefined) {
    problems.push({
      field: "tool",
      reason: "missing required field",
      hint: "The name of the tool to call, such as lookup_order.",
    });
  } else if (tool === null) {
    problems.push({
      field: "tool",
      reason: "expected a non-empty string",
      hint: "The name of the tool to call, such as lookup_order.",
    });
  }
  const args = record.args === undefined ? {} : record.args;
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    problems.push({
      field: "args",
      reason: "expected an object",
      hint: 'The tool\'s arguments as a JSON object, such as {"order_id": "A1001"}.',
    });
  }
  for (const field of Object.keys(record)) {
    if (!CALL_FIELDS.includes(field)) {
      problems.push({
        field,
        reason: "unknown field",
        hint: `A call has only these fields: ${CALL_FIELDS.join(", ")}. Tool arguments go inside args.`,
      });
    }
  }
  if (problems.length > 0 || tool === null) return malformed(tool, args, problems);
  return { ok: true, tool, args };
}

function malformed(tool: string | null, args: unknown, problems: Problem[]): CallRequest {
  return { ok: false, tool, args: args ?? null, problems };
}
