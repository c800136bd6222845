import { catalog } from "../tools";
import { CallBodySchema } from "../wire/call-body";
import { problemSchema } from "../wire/envelope";
import { addRunToolsBodySchema, openRunBodySchema } from "../wire/requests";
import type { JsonSchema } from "./json-schema";
import { answerComponents } from "./openapi-components";
import { OPERATIONS, type Operation, ref, zodSchema } from "./openapi-operations";

/**
 * The OpenAPI 3.1 document of the proxy's own HTTP API. Every body schema in it is generated from
 * the zod schema the route validates or answers with (src/wire/ holds the answers' payloads);
 * OpenAPI 3.1 speaks JSON Schema 2020-12, so zod's output is used as it is. The operations
 * themselves live in openapi-operations.ts, the answers' components in openapi-components.ts.
 */

const SECURITY_SCHEMES = {
  tenantKey: {
    type: "http",
    scheme: "bearer",
    description:
      "A tenant key, held by the orchestrator. Opens runs and reads tool specs; never given to a model.",
  },
  runToken: {
    type: "http",
    scheme: "bearer",
    description: "The run_token of POST /v1/runs: one run, one namespace, short-lived.",
  },
  operatorKey: {
    type: "http",
    scheme: "bearer",
    description: "An operator key, for the human gate and the console.",
  },
  agentKey: {
    type: "http",
    scheme: "bearer",
    description:
      "A long-lived agent key, issued for one agent profile of a tenant (namespace and run limits). Opens runs and MCP sessions; each session is one run.",
  },
  oauth: {
    type: "oauth2",
    description:
      "OAuth 2.1 with PKCE and dynamic client registration, for MCP clients; an operator grants a client one agent profile on the consent page. The access token acts as that profile's agent key.",
    flows: {
      authorizationCode: {
        authorizationUrl: "/authorize",
        tokenUrl: "/token",
        refreshUrl: "/token",
        scopes: {},
      },
    },
  },
} as const;

function operationObject(operation: Operation): JsonSchema {
  const out: JsonSchema = {
    operationId: `${operation.method}${operation.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? "").toUpperCase())}`,
    summary: operation.summary,
    description: operation.description,
    tags: [operation.tag],
    security: operation.credentials.map((credential) => ({ [credential]: [] })),
    responses: operation.responses,
  };
  if (operation.parameters) out.parameters = operation.parameters;
  if (operation.body) {
    out.requestBody = {
      required: true,
      description: operation.body.description,
      content: { "application/json": { schema: ref(operation.body.schema) } },
    };
  }
  return out;
}

let cached: JsonSchema | undefined;

/**
 * The document for a caller that reached the proxy at `origin` (`https://proxy.example.com`): its
 * one server is that origin, so a client generated from it, or the docs page, talks to the proxy
 * it was read from. Everything else is built once per isolate and shared; `servers` is added per
 * call, so no origin is ever handed to another.
 *
 * @example
 * app.get("/openapi.json", (c) => c.json(openApiDocument(new URL(c.req.url).origin)));
 */
export function openApiDocument(origin: string): JsonSchema {
  cached ??= buildDocument();
  const { openapi, info, ...rest } = cached;
  return {
    openapi,
    info,
    servers: [{ url: origin, description: "The proxy this document was read from." }],
    ...rest,
  };
}

function buildDocument(): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of OPERATIONS) {
    paths[operation.path] ??= {};
    (paths[operation.path] as Record<string, JsonSchema>)[operation.method] = operationObject(operation);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Edge tool proxy",
      version: "1",
      description:
        "Tools for LLM agents behind one pipeline: strict validation, server-derived idempotency keys, per-run budgets and one envelope for every answer. Credentials travel as `Authorization: Bearer ...`.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    tags: [
      { name: "runs", description: "Runs and tool calls (REST door)." },
      { name: "approvals", description: "The human gate for destructive calls." },
      { name: "metrics", description: "The health of the tenant's agents over time." },
      { name: "tools", description: "Tool specs for agent frameworks." },
      { name: "mcp", description: "The MCP door to the same pipeline." },
      { name: "meta", description: "Health and documentation." },
    ],
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: {
        ...answerComponents(catalog.all()),
        Problem: zodSchema(problemSchema(), "output"),
        OpenRunBody: zodSchema(openRunBodySchema(), "input"),
        AddRunToolsBody: zodSchema(addRunToolsBodySchema(), "input"),
        CallBody: zodSchema(CallBodySchema, "input"),
        JsonRpcMessage: {
          type: "object",
          required: ["jsonrpc"],
          properties: {
            jsonrpc: { const: "2.0" },
            id: { type: ["string", "integer"] },
            method: { type: "string" },
          },
          description: "A JSON-RPC 2.0 message as the MCP specification defines it.",
        },
      },
    },
  };
}
