import type { Context, MiddlewareHandler } from "hono";
import { failure, type Problem } from "../envelope";
import { requestContext, respond } from "../pipeline/respond";
import type { AppEnv } from "./app-env";

/**
 * Limits on everything a caller controls, checked at the edge before any parsing that could be made
 * to work hard: a hostile header is refused before it is hashed or verified, a hostile body before
 * zod, the ledger or canonical JSON recurse through it. Body size (64 KiB, 413) is hono's bodyLimit
 * on each route; these are the rest. They are generous for any real tool call: a tool's own schema
 * is what tells an agent its arguments are too long, these only stop payloads no tool accepts.
 *
 * Refusals here happen before the run's ledger, like a 413: they spend no budget and are not
 * traced. The rate limit, checked before them, bounds how often a caller can send one.
 */
export const INPUT_LIMITS = {
  /** A run token is about 250 bytes; a tenant key far less. */
  authorization_bytes: 1_024,
  /** An orchestrator's intent nonce, hashed into idempotency keys. */
  intent_bytes: 256,
  /** All header names and values together. */
  header_bytes: 16 * 1_024,
  /** Objects and arrays nested in a body, the body itself being level 1. */
  depth: 10,
  string_chars: 10_000,
  array_items: 100,
  object_keys: 50,
  key_chars: 128,
  /** OpenAI's limit on function names, so no tool an agent can be offered has a longer name. */
  tool_name_chars: 64,
} as const;

/**
 * Names that reach an object's prototype rather than its own fields when copied: `{"__proto__":
 * {...}}` would hand a validator inherited arguments that the digest and the key never saw.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** A body with thousands of violations gets the first few; the agent must fix those anyway. */
const MAX_PROBLEMS = 20;

function refuse(c: Context<AppEnv>, status: 422 | 431, message: string, problems: Problem[]) {
  return respond(
    c,
    failure(requestContext(c.env), {
      code: "validation_error",
      message,
      problems,
      side_effect_confirmed: false,
    }),
    { status },
  );
}

/**
 * Header sizes, for every route (mounted in app.ts). Counted in characters, which are bytes for the
 * ASCII that keys, tokens and nonces are made of.
 */
export const limitHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  const problems: Problem[] = [];
  let total = 0;
  for (const [name, value] of c.req.raw.headers) total += name.length + value.length + 4;
  if (total > INPUT_LIMITS.header_bytes) {
    problems.push({
      field: "headers",
      reason: `${total} bytes of headers in total, over the limit`,
      hint: `At most ${INPUT_LIMITS.header_bytes} bytes of request headers in total.`,
    });
  }
  const single = [
    ["authorization", INPUT_LIMITS.authorization_bytes, "Send only Bearer <key or run token>."],
    ["x-call-intent", INPUT_LIMITS.intent_bytes, "Send a short nonce, such as a UUID."],
  ] as const;
  for (const [name, limit, hint] of single) {
    const size = c.req.raw.headers.get(name)?.length ?? 0;
    if (size > limit)
      problems.push({
        field: `headers.${name}`,
        reason: `${size} bytes, over the limit`,
        hint: `At most ${limit} bytes. ${hint}`,
      });
  }
  if (problems.length > 0) {
    return refuse(
      c,
      431,
      `Request headers too large: ${problems.map((problem) => problem.field).join(", ")}.`,
      problems,
    );
  }
  await next();
};

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

/** One tool per request: a batch or a list of tool names is refused before anything else. */
function batchProblems(body: unknown): Problem[] {
  if (Array.isArray(body)) {
    return [
      {
        field: "body",
        reason: "expected a JSON object",
        hint: `A request carries exactly one tool call; this one is an array of ${body.length}. Send each call as its own request: {"tool": "<tool name>", "args": {...}}.`,
      },
    ];
  }
  if (typeof body !== "object" || body === null) return [];
  const tool = (body as Record<string, unknown>).tool;
  if (Array.isArray(tool)) {
    return [
      {
        field: "tool",
        reason: `a list of ${tool.length} tools; a request calls exactly one`,
        hint: "Name one tool, such as lookup_order, and send other calls as their own requests.",
      },
    ];
  }
  return [];
}

function toolNameProblems(body: unknown): Problem[] {
  const tool = typeof body === "object" && body !== null ? (body as Record<string, unknown>).tool : undefined;
  if (typeof tool !== "string" || tool.length <= INPUT_LIMITS.tool_name_chars) return [];
  return [
    {
      field: "tool",
      reason: `a tool name of ${tool.length} characters, over the limit`,
      hint: `Tool names are at most ${INPUT_LIMITS.tool_name_chars} characters; see the run's tool list.`,
    },
  ];
}

/**
 * Structural limits of a JSON body, after the route's bodyLimit. A body that is not JSON passes
 * through: the route's own parser answers it with the usual problems. `call` bodies are tool calls
 * and must also name exactly one tool.
 */
export function limitJsonBody(kind: "call" | "object"): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      // The route reads the text itself and says what is wrong with it.
      return next();
    }
    // Parsed once: the route takes this value instead of parsing the text again.
    c.set("json_body", { value: body });
    const batch = kind === "call" ? batchProblems(body) : [];
    if (batch.length > 0) {
      return refuse(
        c,
        422,
        "A request carries exactly one tool call. Send each call as its own request.",
        batch,
      );
    }
    // A call's arguments are checked by the one entry of both doors (pipeline/limit.ts); here only
    // the rest of the body, so no argument is walked twice at the edge.
    const checked = kind === "call" && isObject(body) ? { ...body, args: undefined } : body;
    const problems = [
      ...(kind === "call" ? toolNameProblems(body) : []),
      ...structuralProblems(checked),
    ].filter((problem, index, all) => all.findIndex((other) => other.field === problem.field) === index);
    if (problems.length > 0) {
      return refuse(
        c,
        422,
        `The request is over the proxy's input limits: ${problems
          .slice(0, 3)
          .map((problem) => `${problem.field} (${problem.reason})`)
          .join("; ")}. Fix the fields listed in problems.`,
        problems,
      );
    }
    await next();
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
