import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { app } from "../src/app";
import { type Envelope, EnvelopeSchema } from "../src/envelope";
import { OpenRunBodySchema } from "../src/routes/runs";
import { renderDocsPage } from "../src/specs/docs-page";
import type { JsonSchema } from "../src/specs/json-schema";
import { DATA_COMPONENTS, type DataComponent } from "../src/specs/openapi-components";
import { documentedRoutes, UNDOCUMENTED_PREFIXES } from "../src/specs/openapi-operations";
import { asOperator, callTool, decide, KEYS, request, type TestRun } from "./helpers";

async function get(path: string) {
  return exports.default.fetch(new Request(`https://proxy.test${path}`));
}

async function openApi(): Promise<JsonSchema> {
  const response = await get("/openapi.json");
  expect(response.status).toBe(200);
  return (await response.json()) as JsonSchema;
}

const withoutDialect = (schema: object) => {
  const { $schema: _dialect, ...rest } = schema as JsonSchema;
  return rest;
};

/** Hono's `/v1/runs/:run_id` in OpenAPI's spelling. */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}");

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document in the JSON Schema 2020-12 dialect", async () => {
    const document = await openApi();
    expect(document.openapi).toBe("3.1.0");
    expect(document.jsonSchemaDialect).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(Object.keys(document.paths as object)).toContain("/v1/runs/{run_id}/calls");
  });

  it("takes its body schemas from the zod schemas the routes use", async () => {
    const schemas = (await openApi()).components as { schemas: Record<string, unknown> };
    expect(schemas.schemas.Envelope).toEqual(
      withoutDialect(z.toJSONSchema(EnvelopeSchema, { io: "output", target: "draft-2020-12" })),
    );
    expect(schemas.schemas.OpenRunBody).toEqual(
      withoutDialect(z.toJSONSchema(OpenRunBodySchema, { io: "input", target: "draft-2020-12" })),
    );
    expect(schemas.schemas.CallBody).toMatchObject({ required: ["tool"], additionalProperties: false });
  });

  it("documents every route the app serves, and no route it does not serve", () => {
    const served = new Set(
      app.routes
        .filter((route) => route.method !== "ALL")
        .filter((route) => !UNDOCUMENTED_PREFIXES.some((prefix) => route.path.startsWith(prefix)))
        .map((route) => `${route.method} ${openApiPath(route.path)}`),
    );
    const documented = new Set(documentedRoutes().map((route) => `${route.method} ${route.path}`));
    const undocumented = [...served].filter((route) => !documented.has(route));
    const phantom = [...documented].filter((route) => !served.has(route));
    expect(undocumented, "add these routes to OPERATIONS in src/specs/openapi.ts").toEqual([]);
    expect(phantom, "these documented routes are not served").toEqual([]);
  });

  it("resolves every $ref, declares every path parameter and names only known credentials", async () => {
    const document = await openApi();
    const components = document.components as { schemas: object; securitySchemes: object };
    const refs = JSON.stringify(document).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const name = ref.split("/").pop()?.replace('"', "") ?? "";
      expect(Object.keys(components.schemas), ref).toContain(name);
    }
    for (const [path, methods] of Object.entries(
      document.paths as Record<string, Record<string, JsonSchema>>,
    )) {
      for (const [method, operation] of Object.entries(methods)) {
        const declared = ((operation.parameters ?? []) as JsonSchema[])
          .filter((parameter) => parameter.in === "path")
          .map((parameter) => parameter.name);
        const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
        expect(declared, `${method} ${path}`).toEqual(inPath);
        for (const requirement of operation.security as object[]) {
          for (const scheme of Object.keys(requirement)) {
            expect(Object.keys(components.securitySchemes)).toContain(scheme);
          }
        }
        expect(Object.keys(operation.responses as object).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
  });

  it("documents the query parameters of /v1/tools from the route's own schema", async () => {
    const document = await openApi();
    const operation = (document.paths as Record<string, Record<string, JsonSchema>>)["/v1/tools"]?.get;
    const parameters = operation?.parameters as JsonSchema[];
    expect(parameters.map((parameter) => parameter.name)).toEqual(["namespace", "format"]);
    expect(parameters.find((parameter) => parameter.name === "format")?.schema).toMatchObject({
      enum: ["openai", "openai-responses", "anthropic", "gemini", "mcp", "jsonschema"],
      default: "jsonschema",
    });
    expect(operation?.security).toEqual([{ tenantKey: [] }, { runToken: [] }]);
  });
});

type Operations = Record<string, Record<string, JsonSchema>>;

/** The schema of an operation's JSON answer with this status, if it has one. */
function answerSchema(document: JsonSchema, method: string, path: string, status: string) {
  const responses = (document.paths as Operations)[path]?.[method]?.responses as Record<string, JsonSchema>;
  const content = responses?.[status]?.content as Record<string, JsonSchema> | undefined;
  return content?.["application/json"]?.schema as JsonSchema | undefined;
}

/** The component an envelope answer names for its `data`; undefined when `data` is left open. */
function dataComponent(document: JsonSchema, method: string, path: string, status: string) {
  const schema = answerSchema(document, method, path, status);
  const narrowed = (schema?.allOf as JsonSchema[] | undefined)?.[1]?.properties as
    | Record<string, JsonSchema>
    | undefined;
  const ref = narrowed?.data?.$ref;
  return typeof ref === "string" ? ref.split("/").pop() : undefined;
}

/** Every success answer (200, 201) of the document that is an envelope, as "method path status". */
function envelopeSuccesses(document: JsonSchema): string[] {
  return Object.entries(document.paths as Operations).flatMap(([path, methods]) =>
    Object.keys(methods).flatMap((method) =>
      ["200", "201"]
        .filter((status) =>
          JSON.stringify(answerSchema(document, method, path, status) ?? null).includes("/Envelope"),
        )
        .map((status) => `${method} ${path} ${status}`),
    ),
  );
}

describe("the data of every success answer", () => {
  it("is typed in the document, except a tool call's, whose data is the tool's own output", async () => {
    const document = await openApi();
    const open = envelopeSuccesses(document).filter((answer) => {
      const [method, path, status] = answer.split(" ") as [string, string, string];
      return dataComponent(document, method, path, status) === undefined;
    });
    expect(open).toEqual(["post /v1/runs/{run_id}/calls 200"]);
  });

  it("documents each payload as the JSON Schema of its zod schema, a strict one for src/wire's", async () => {
    const schemas = ((await openApi()).components as { schemas: Record<string, JsonSchema> }).schemas;
    // Older payloads of the tool pages keep their open objects; every src/wire payload is closed.
    const open = new Set(["ResultPage", "NamespaceSpecs"]);
    for (const [name, schema] of Object.entries(DATA_COMPONENTS)) {
      const component = schemas[name] as JsonSchema;
      expect(Object.keys(component.properties as object), name).toEqual(Object.keys(schema.shape));
      expect(component.additionalProperties, name).toBe(false);
      if (!open.has(name)) expect(schema.def.catchall?._zod.def.type, `${name} is strict`).toBe("never");
    }
    // A payload holding another component refers to it rather than repeating it.
    expect(schemas.RunTrace?.properties).toMatchObject({
      run: { $ref: "#/components/schemas/RunStatus" },
      entries: { items: { $ref: "#/components/schemas/TraceEntry" } },
    });
    expect(JSON.stringify(schemas.ApprovalRecord)).toContain('"$ref":"#/components/schemas/Envelope"');
  });

  it("parses with its documented zod schema on every route, for real answers", async () => {
    const document = await openApi();
    const checked = new Set<string>();
    async function check(method: string, path: string, answer: Promise<{ status: number; body: Envelope }>) {
      const { status, body } = await answer;
      expect(body.error, `${method} ${path}`).toBeNull();
      const name = dataComponent(document, method, path, String(status));
      expect(Object.keys(DATA_COMPONENTS), `${method} ${path} ${status}`).toContain(name);
      const parsed = DATA_COMPONENTS[name as DataComponent].safeParse(body.data);
      expect(parsed.error?.issues ?? [], `${name}, the data of ${method} ${path}`).toEqual([]);
      checked.add(`${method} ${path} ${status}`);
      return body.data as Record<string, unknown>;
    }

    await check("get", "/healthz", request("/healthz"));
    await check(
      "get",
      "/v1/tools",
      request("/v1/tools?namespace=support", { headers: { authorization: `Bearer ${KEYS.acme}` } }),
    );
    // A scenario that taints the run and makes a paged result, so optional and nullable parts are filled.
    const opened = await check(
      "post",
      "/v1/runs",
      request("/v1/runs", {
        method: "POST",
        headers: { authorization: `Bearer ${KEYS.acme}`, "content-type": "application/json" },
        body: JSON.stringify({
          namespace: "support",
          limits: { max_destructive: 2 },
          scenario: [
            { mode: "injection", path_prefix: "/customers" },
            { mode: "large", path_prefix: "/refund-policies" },
          ],
        }),
      }),
    );
    expect(opened.scenario).toHaveLength(2);
    const run: TestRun = {
      id: String(opened.run_id),
      token: String(opened.run_token),
      tenant: "acme",
      data: opened,
    };
    const asAgent = { headers: { authorization: `Bearer ${run.token}` } };

    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    await callTool(run, "get_customer_profile", { customer_id: "C100" });
    const large = await callTool(run, "search_refund_policy", { query: "refund" });
    const handle = (large.body.data as { handle: string }).handle;
    const refund = (order_id: string) =>
      callTool(run, "issue_refund", { order_id, amount_cents: 100, reason: "user_cancel" });
    const rejected = (await refund("A1002")).body.approval?.id ?? "";
    const approved = (await refund("A1001")).body.approval?.id ?? "";

    const status = await check("get", "/v1/runs/{run_id}", request(`/v1/runs/${run.id}`, asAgent));
    expect(status.tainted_by).not.toBeNull();
    await check(
      "get",
      "/v1/runs/{run_id}/results/{handle}",
      request(`/v1/runs/${run.id}/results/${handle}?cursor=0`, asAgent),
    );
    await check("get", "/v1/approvals", asOperator("/v1/approvals?state=pending"));
    await check("get", "/v1/approvals/{id}", asOperator(`/v1/approvals/${approved}`));
    await check("post", "/v1/approvals/{id}/reject", decide(rejected, "reject", "not this order"));
    const decided = await check(
      "post",
      "/v1/approvals/{id}/approve",
      decide(approved, "approve", "the customer confirmed"),
    );
    expect(decided.approval).toMatchObject({ state: "executed", result: { outcome: "success" } });
    // Decided approvals carry who decided, why, and the execution's envelope.
    await check("get", "/v1/approvals", asOperator("/v1/approvals?state=executed"));
    await check("get", "/v1/approvals", asOperator("/v1/approvals?state=rejected"));
    await check("get", "/v1/approvals/{id}", asOperator(`/v1/approvals/${approved}`));
    const trace = await check("get", "/v1/runs/{run_id}/trace", request(`/v1/runs/${run.id}/trace`, asAgent));
    expect((trace.entries as unknown[]).length).toBeGreaterThan(4);
    const ended = await check(
      "post",
      "/v1/runs/{run_id}/end",
      request(`/v1/runs/${run.id}/end`, { method: "POST", ...asAgent }),
    );
    expect(ended).toMatchObject({ state: "closed", ended_at: expect.any(String) });

    // Every typed success answer of the document was met.
    const typed = envelopeSuccesses(document).filter((answer) => {
      const [method, path, code] = answer.split(" ") as [string, string, string];
      return dataComponent(document, method, path, code) !== undefined;
    });
    expect([...checked].sort()).toEqual(typed.sort());
  });
});

describe("GET /docs", () => {
  it("serves a self-contained page that loads nothing from anywhere", async () => {
    const response = await get("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'",
    );
    const page = await response.text();
    expect(page).not.toMatch(/<script|<link|<img|@import/i);
    expect(page).not.toMatch(/(src|href)=["']?(https?:)?\/\//i);
    for (const { path } of documentedRoutes()) expect(page).toContain(`<code>${path}</code>`);
    expect(page).toContain('id="schema-Envelope"');
  });

  it("escapes what it renders", () => {
    const page = String(
      renderDocsPage({
        info: { title: "<script>alert(1)</script>", description: "a & b" },
        tags: [],
        paths: {},
        components: { schemas: {}, securitySchemes: {} },
      }),
    );
    expect(page).not.toContain("<script>alert(1)</script>");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toContain("a &amp; b");
  });
});
