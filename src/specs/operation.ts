import * as z from "zod";
import { type JsonSchema, withoutDialect } from "./json-schema";
import type { DataComponent } from "./openapi-components";

/**
 * One operation of the proxy's HTTP API, declared once beside its handler: the route registers
 * its method and path from it (`routeOf`) and validates with its schemas, and the OpenAPI document
 * (openapi.ts) is built from the same object. Whatever costs something to build (JSON Schemas of
 * queries and bodies, the tool-call union over the catalog) is an accessor, called only when the
 * document is built, so declaring an operation costs an isolate nothing at start.
 */

export type Credential = "tenantKey" | "runToken" | "operatorKey" | "agentKey" | "oauth";
type Method = "get" | "post" | "delete";

/** An answer as the document shows it, or the tool-call union the document builds. */
export type Answer = JsonSchema | ToolCallSuccess;

export interface Operation {
  method: Method;
  /** The path as OpenAPI writes it, from the root: `/v1/runs/{run_id}/calls`. */
  path: string;
  summary: string;
  description: string;
  tag: "runs" | "approvals" | "audit" | "metrics" | "tools" | "mcp" | "meta";
  /** Any one of these is accepted; empty means no credential. */
  credentials: readonly Credential[];
  /** Path and header parameters; the query's come from `query`. */
  parameters?: readonly JsonSchema[];
  /** The query the route validates (`validated("query", operation.query)`), one parameter per field. */
  query?: () => z.ZodObject;
  /** The body the route reads, as the component `component`, built from its zod schema. */
  body?: { component: string; description: string; schema: () => z.ZodType };
  /** A body a protocol defines (MCP's JSON-RPC), given as JSON Schema. */
  protocolBody?: { component: string; description: string; schema: JsonSchema };
  responses: Readonly<Record<string, Answer>>;
  /**
   * Set, to say why, when the operation's success answers are not envelopes: a protocol or a
   * standard defines their shape (MCP, RFC metadata, this document, HTML). Every other success
   * answer is an envelope whose `data` names its schema; test/workerd/openapi.test.ts checks both.
   */
  notEnvelope?: string;
}

/**
 * An operation with its exact type kept: the path as a literal (so `routeOf` types the route's
 * parameters) and the query's and body's schemas (so `c.req.valid(…)` is typed).
 */
export function defineOperation<const O extends Operation>(operation: O): O {
  return operation;
}

/** `/v1/runs/{run_id}` → `/v1/runs/:run_id`, as a type. */
type HonoPath<P extends string> = P extends `${infer Head}{${infer Name}}${infer Tail}`
  ? `${Head}:${Name}${HonoPath<Tail>}`
  : P;
/** What is left of `P` under the prefix `M` a route is mounted at: `/` for the prefix itself. */
type Below<M extends string, P extends string> = P extends M
  ? "/"
  : P extends `${M}${infer Rest}`
    ? Rest
    : never;

/**
 * The Hono path of `operation` in routes mounted at `mount`: `routeOf(CALL, "/v1/runs")` is
 * `/:run_id/calls`. Typed as that literal, so `c.req.param("run_id")` is known to be there.
 *
 * @example
 * runs.on(CALL.method, routeOf(CALL, "/v1/runs"), requireRunToken, handler);
 */
export function routeOf<const P extends string, const M extends string>(
  operation: { path: P },
  mount: M,
): Below<M, HonoPath<P>> {
  const path = operation.path.replace(/\{([^}]+)\}/g, ":$1");
  const below = mount === "" ? path : path.slice(mount.length);
  if (!path.startsWith(mount) || (below !== "" && !below.startsWith("/"))) {
    throw new Error(`${operation.path} is not served under ${mount}`);
  }
  return (below === "" ? "/" : below) as Below<M, HonoPath<P>>;
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export function zodSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  return withoutDialect(z.toJSONSchema(schema, { io, target: "draft-2020-12" }) as JsonSchema);
}

/**
 * An answer whose body is the envelope: the proxy's one response shape. `data` names the component
 * of a success's payload (openapi-components.ts), and is then required so generated clients type
 * it as present; failures carry `data: null`.
 */
export function envelope(description: string, data?: DataComponent): JsonSchema {
  const schema = data
    ? { allOf: [ref("Envelope"), { type: "object", required: ["data"], properties: { data: ref(data) } }] }
    : ref("Envelope");
  return { description, content: { "application/json": { schema } } };
}

/**
 * A tool call's success: one envelope per tool of the catalog, expanded when the document is built
 * (openapi.ts), so declaring the route builds none of the tools' schemas.
 */
export class ToolCallSuccess {
  constructor(readonly description: string) {}
}

export const toolCallSuccess = (description: string) => new ToolCallSuccess(description);

export const FAILURES = {
  "401": envelope("Missing or invalid credential (`permission_error`); `WWW-Authenticate` says which."),
  "403": envelope("The credential may not do this (`permission_error`)."),
  "404": envelope("No such run, or its data has expired (`not_found`)."),
};

export const RUN_ID: JsonSchema = {
  name: "run_id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "The run_id returned by POST /v1/runs.",
};

export const APPROVAL_ID: JsonSchema = {
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: "The approval id, from the agent's approval_required envelope or the list.",
};

/** Query parameters from a strict zod object: one parameter per field, with its description. */
export function queryParameters(schema: z.ZodObject<z.ZodRawShape>): JsonSchema[] {
  const json = zodSchema(schema, "input");
  const required = new Set(Array.isArray(json.required) ? json.required : []);
  return Object.entries(json.properties as Record<string, JsonSchema>).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: "query", required: required.has(name), description, schema: rest };
  });
}
