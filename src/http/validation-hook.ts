import { zValidator } from "@hono/zod-validator";
import type { Context, MiddlewareHandler } from "hono";
import type * as z from "zod";
import { lazily } from "../core/lazily";
import type { Env } from "../env";
import { omitNullOptionals, type ProblemSubject, problemsFromIssues } from "../machine/validate";
import { failure, type Problem } from "../wire/envelope";
import { requestContext, respond } from "./respond";

/**
 * Validation of every JSON route that is not a tool call (opening a run, operator decisions, the
 * approvals, tool-spec and result-page queries): `@hono/zod-validator` with one hook that answers
 * like the call path does. Each zod issue becomes a field-level problem `{field, reason, hint}` from
 * the same builder the tool-call pipeline uses (src/machine/validate.ts), inside a
 * `validation_error` envelope with HTTP 422. Tool-call bodies keep their own path: a malformed call
 * is still charged and traced by its run.
 */

type Target = "json" | "query";

const SUBJECTS: Record<Target, ProblemSubject & { message: string }> = {
  json: {
    root: "body",
    prefix: "",
    object: "a JSON object",
    objectHint: "Send a JSON object.",
    fallbackHint: "See the request schema in the API reference (GET /docs).",
    message: "The request body is invalid. Fix the fields listed in problems.",
  },
  query: {
    root: "query",
    prefix: "query.",
    object: "query parameters",
    objectHint: "Send the parameters in the query string.",
    fallbackHint: "See the parameters in the API reference (GET /docs).",
    message: "The query is invalid. Fix the parameters listed in problems.",
  },
};

/** Any route's context: the hook serves routes of several hono apps, all with the proxy's bindings. */
function refuse(c: Context, message: string, problems: Problem[]) {
  // validation_error: HTTP 422, side_effect_confirmed false, next action fix_arguments.
  return respond(c, failure(requestContext(c.env as Env), { code: "validation_error", message, problems }));
}

/**
 * The hook: nothing on success; on failure the problems of `schema`'s issues. The schema is bound
 * here because problems name valid fields and quote descriptions, which zod issues do not carry.
 */
export function validationHook(target: Target, schema: z.ZodType) {
  const subject = SUBJECTS[target];
  return (
    result: { success: true } | { success: false; error: { issues: z.core.$ZodIssue[] } },
    c: Context,
  ) => {
    if (result.success) return;
    return refuse(c, subject.message, problemsFromIssues(schema, result.error.issues, subject));
  };
}

/**
 * `zValidator(target, schema)` with the hook, parsing as the call path parses: `null` for an
 * optional field means absent (OpenAI strict mode), and issues carry their input, which the
 * reasons quote (`expected number, got string`). Route handlers read `c.req.valid(target)`.
 * `schema` may be a `lazily` accessor: the schema and its validator are then built on the route's
 * first request, not when the routes are registered as the isolate starts.
 */
export function validated<T extends z.ZodType, Tg extends Target>(target: Tg, schema: T | (() => T)) {
  const validator = (s: T) =>
    zValidator(target, s, validationHook(target, s), {
      // The library types this result through a conditional on T that stays open for a generic T.
      validationFunction: (v, value) =>
        v.safeParseAsync(omitNullOptionals(v, value), { reportInput: true }) as never,
    });
  // A zod schema is an object, never a function: a function is an accessor.
  const built = lazily(() => validator(typeof schema === "function" ? schema() : schema));
  const handler: ReturnType<typeof validator> = (c, next) => built()(c, next);
  return handler;
}

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * Reads the body as JSON, in front of `validated("json", …)`. hono's JSON validator parses only a
 * body declared `application/json` (any other is validated as `{}`) and throws on an empty or
 * malformed one. This proxy reads the body as JSON whatever its declared type, as the call path
 * does, so here: a body that is not JSON gets the usual clear problem, an empty body is `{}` (every
 * field of a decision body is optional), and the validator is handed the body hono has already
 * cached, its declared type normalised to JSON.
 */
export const jsonBody: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const text = await c.req.text();
  if (text.trim() === "") {
    // hono's json() parses the cached text: an empty body is read as the empty object. The cache
    // holds promises, though hono's type for it names the resolved values.
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve("{}");
  } else {
    try {
      JSON.parse(text);
    } catch {
      return refuse(c, "The request body is not valid JSON.", [
        { field: "body", reason: "not valid JSON", hint: "Send a JSON object." },
      ]);
    }
  }
  const mediaType = (c.req.header("content-type") ?? "").split(";")[0]?.trim() ?? "";
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    // The body stays in hono's cache; only the declared type the validator looks at changes.
    const headers = new Headers(c.req.raw.headers);
    headers.set("content-type", "application/json");
    c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
  }
  await next();
};
