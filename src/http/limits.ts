import type { Context, MiddlewareHandler } from "hono";
import { INPUT_LIMITS } from "../core/input-limits";
import { structuralProblems } from "../machine/limit";
import { failure, type Problem } from "../wire/envelope";
import type { AppEnv } from "./app-env";
import { requestContext, respond } from "./respond";

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
    // A call's arguments are checked by the one entry of both doors (machine/limit.ts); here only
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
