import { catalog } from "../tools";
import { problemSchema } from "../wire/envelope";
import type { JsonSchema } from "./json-schema";
import { answerComponents, type ToolAnswer, toolOutputComponents } from "./openapi-components";
import { type Answer, type Operation, queryParameters, ref, ToolCallSuccess, zodSchema } from "./operation";

/**
 * The OpenAPI 3.1 document of the proxy's own HTTP API, built from the operations its routes
 * declare (operation.ts; the list is src/routes/api.ts). Every body schema in it is generated from
 * the zod schema the route validates or answers with (src/wire/ holds the answers' payloads);
 * OpenAPI 3.1 speaks JSON Schema 2020-12, so zod's output is used as it is. The answers'
 * components live in openapi-components.ts.
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

/**
 * A tool call's success: the envelope of one of the catalog's tools, told apart by `tool`, with
 * `data` that tool's shaped output, or a LargeResult (summary and handle) when the output is too
 * large to return inline. `tool` makes the branches exclusive, so `oneOf` holds; a generated
 * client gets a union it narrows by checking `tool`.
 */
function toolCallSuccess(description: string, answers: readonly ToolAnswer[]): JsonSchema {
  const oneOf = answers.map(({ tool, namespaces, outputs }) => ({
    title: tool,
    description: `A call of \`${tool}\` (namespace ${namespaces.join(", ")}).`,
    allOf: [
      ref("Envelope"),
      {
        type: "object",
        required: ["tool", "data"],
        properties: {
          tool: { const: tool },
          data: { anyOf: [...outputs.map(ref), ref("LargeResult")] },
        },
      },
    ],
  }));
  return { description, content: { "application/json": { schema: { oneOf } } } };
}

function responseObject(answer: Answer): JsonSchema {
  if (!(answer instanceof ToolCallSuccess)) return answer;
  return toolCallSuccess(answer.description, toolOutputComponents(catalog.all()).answers);
}

function operationObject(operation: Operation): JsonSchema {
  const out: JsonSchema = {
    operationId: `${operation.method}${operation.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? "").toUpperCase())}`,
    summary: operation.summary,
    description: operation.description,
    tags: [operation.tag],
    security: operation.credentials.map((credential) => ({ [credential]: [] })),
    responses: Object.fromEntries(
      Object.entries(operation.responses).map(([status, answer]) => [status, responseObject(answer)]),
    ),
  };
  const parameters = [
    ...(operation.parameters ?? []),
    ...(operation.query ? queryParameters(operation.query()) : []),
  ];
  if (parameters.length > 0) out.parameters = parameters;
  const body = operation.body ?? operation.protocolBody;
  if (body) {
    out.requestBody = {
      required: true,
      description: body.description,
      content: { "application/json": { schema: ref(body.component) } },
    };
  }
  return out;
}

/** The request bodies' components, from the schemas the routes read them with. */
function bodyComponents(operations: readonly Operation[]): Record<string, JsonSchema> {
  const components: Record<string, JsonSchema> = {};
  for (const { body, protocolBody } of operations) {
    if (body) components[body.component] = zodSchema(body.schema(), "input");
    if (protocolBody) components[protocolBody.component] = protocolBody.schema;
  }
  return components;
}

const cached = new WeakMap<readonly Operation[], JsonSchema>();

/**
 * The document for a caller that reached the proxy at `origin` (`https://proxy.example.com`): its
 * one server is that origin, so a client generated from it, or the docs page, talks to the proxy
 * it was read from. Everything else is built once per isolate and shared; `servers` is added per
 * call, so no origin is ever handed to another.
 *
 * @example
 * docs.get("/openapi.json", (c) => c.json(openApiDocumentOf(OPERATIONS, new URL(c.req.url).origin)));
 */
export function openApiDocumentOf(operations: readonly Operation[], origin: string): JsonSchema {
  let built = cached.get(operations);
  if (!built) {
    built = buildDocument(operations);
    cached.set(operations, built);
  }
  const { openapi, info, ...rest } = built;
  return {
    openapi,
    info,
    servers: [{ url: origin, description: "The proxy this document was read from." }],
    ...rest,
  };
}

function buildDocument(operations: readonly Operation[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of operations) {
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
      {
        name: "audit",
        description: "Signed, hash-chained receipts of every effect decision (docs/audit.md).",
      },
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
        ...bodyComponents(operations),
      },
    },
  };
}
