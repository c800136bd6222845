import { env, exports } from "cloudflare:workers";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { app } from "../../src/app";
import { mcp } from "../../src/mcp/routes";
import { metrics } from "../../src/metrics/route";
import { approvals } from "../../src/routes/approvals";
import {
  docs,
  documentedRoutes,
  OPERATIONS,
  openApiDocument,
  UNDOCUMENTED_PREFIXES,
} from "../../src/routes/docs";
import { operatorRuns } from "../../src/routes/operator-runs";
import type { ResultSummary } from "../../src/shaping/cap";
import { renderDocsPage, SANDBOX_DEMO_TENANT_KEY, TENANT_KEY_PLACEHOLDER } from "../../src/specs/docs-page";
import type { JsonSchema } from "../../src/specs/json-schema";
import { DATA_COMPONENTS, LargeResultSchema, toolOutputComponents } from "../../src/specs/openapi-components";
import { catalog } from "../../src/tools";
import { type Envelope, envelopeSchema } from "../../src/wire/envelope";
import { openRunBodySchema } from "../../src/wire/requests";
import { asOperator, assertNoSecrets, callTool, decide, KEYS, request, type TestRun } from "./helpers";

async function get(path: string, origin = "https://proxy.test") {
  return exports.default.fetch(new Request(`${origin}${path}`));
}

async function openApi(origin?: string): Promise<JsonSchema> {
  const response = await get("/openapi.json", origin);
  expect(response.status).toBe(200);
  return (await response.json()) as JsonSchema;
}

/** Every component a success answer's `data` may name, with the zod schema it was generated from. */
const TOOL_OUTPUTS = toolOutputComponents(catalog.all());
const ZOD_OF_COMPONENT = new Map<string, z.ZodType>([
  ...Object.entries(DATA_COMPONENTS),
  ["LargeResult", LargeResultSchema],
  ...TOOL_OUTPUTS.schemas,
]);

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

  it("names the origin it was requested from as its one server, and no other", async () => {
    const [first, local, again] = [
      await openApi("https://proxy.test"),
      await openApi("http://127.0.0.1:8787"),
      await openApi("https://proxy.test"),
    ];
    const urls = (document: JsonSchema) => (document.servers as Array<{ url: string }>).map(({ url }) => url);
    expect(urls(first)).toEqual(["https://proxy.test"]);
    expect(urls(local)).toEqual(["http://127.0.0.1:8787"]);
    expect(urls(again)).toEqual(["https://proxy.test"]);
    expect(JSON.stringify(local)).not.toContain("proxy.test");
    expect(JSON.stringify(again)).not.toContain("127.0.0.1");
    // Built once, with only the servers differing per origin.
    const { servers: _a, ...restA } = openApiDocument("https://a.example");
    const { servers: _b, ...restB } = openApiDocument("https://b.example");
    expect(restA.paths).toBe(restB.paths);
    expect(openApiDocument("https://a.example").servers).toEqual([
      { url: "https://a.example", description: expect.any(String) },
    ]);
    assertNoSecrets(JSON.stringify(first));
  });

  it("takes its body schemas from the zod schemas the routes use", async () => {
    const schemas = (await openApi()).components as { schemas: Record<string, unknown> };
    expect(schemas.schemas.Envelope).toEqual(
      withoutDialect(z.toJSONSchema(envelopeSchema(), { io: "output", target: "draft-2020-12" })),
    );
    expect(schemas.schemas.OpenRunBody).toEqual(
      withoutDialect(z.toJSONSchema(openRunBodySchema(), { io: "input", target: "draft-2020-12" })),
    );
    expect(schemas.schemas.CallBody).toMatchObject({ required: ["tool"], additionalProperties: false });
  });

  it("documents every route the app serves, and no route it does not serve", () => {
    // Parts loaded on first use: the MCP server and the docs at the root, the operator routes at
    // their prefixes.
    const mounted = (prefix: string, part: { routes: Array<{ method: string; path: string }> }) =>
      part.routes.map((route) => ({ ...route, path: `${prefix}${route.path === "/" ? "" : route.path}` }));
    const served = new Set(
      [
        ...app.routes,
        ...mcp.routes,
        ...docs.routes,
        ...mounted("/v1/approvals", approvals),
        ...mounted("/v1/metrics", metrics),
        ...mounted("/v1/runs", operatorRuns),
      ]
        .filter((route) => route.method !== "ALL")
        .filter((route) => !UNDOCUMENTED_PREFIXES.some((prefix) => route.path.startsWith(prefix)))
        .map((route) => `${route.method} ${openApiPath(route.path)}`),
    );
    const documented = new Set(documentedRoutes().map((route) => `${route.method} ${route.path}`));
    const undocumented = [...served].filter((route) => !documented.has(route));
    const phantom = [...documented].filter((route) => !served.has(route));
    expect(
      undocumented,
      "declare these routes' operations beside their handlers and list them in OPERATIONS of src/routes/docs.ts",
    ).toEqual([]);
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

/** One shape of a success envelope: its `data` is one of `components`; `tool`, when pinned, says whose. */
interface DataBranch {
  tool?: string;
  components: string[];
}

const ENVELOPE_REF = "#/components/schemas/Envelope";
const componentName = (ref: unknown) => (typeof ref === "string" ? ref.split("/").pop() : undefined);

/** `allOf: [Envelope, { required: [data], properties: { data: $ref | anyOf $refs } }]`, else undefined. */
function narrowedEnvelope(schema: JsonSchema | undefined): DataBranch | undefined {
  const [base, narrowing] = (schema?.allOf ?? []) as JsonSchema[];
  if (base?.$ref !== ENVELOPE_REF || !narrowing) return undefined;
  const properties = (narrowing.properties ?? {}) as Record<string, JsonSchema>;
  const data = properties.data;
  if (!data || !(narrowing.required as string[] | undefined)?.includes("data")) return undefined;
  const refs =
    data.$ref !== undefined ? [data.$ref] : ((data.anyOf ?? []) as JsonSchema[]).map((s) => s.$ref);
  const components = refs.map(componentName);
  if (components.length === 0 || components.some((name) => name === undefined)) return undefined;
  const tool = properties.tool?.const;
  return { ...(typeof tool === "string" ? { tool } : {}), components: components as string[] };
}

/**
 * What an envelope answer says its `data` is: one branch, or one per tool for a tool call's
 * `oneOf`. Undefined when `data` is left open (a bare Envelope, or no schema at all).
 */
function dataBranches(document: JsonSchema, method: string, path: string, status: string) {
  const schema = answerSchema(document, method, path, status);
  if (Array.isArray(schema?.oneOf)) {
    const branches = (schema.oneOf as JsonSchema[]).map(narrowedEnvelope);
    return branches.every((branch) => branch !== undefined) ? (branches as DataBranch[]) : undefined;
  }
  const branch = narrowedEnvelope(schema);
  return branch ? [branch] : undefined;
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

/** Operations that answer no success at all, and why: a method kept only to refuse. */
const NO_SUCCESS: Record<string, string> = { "get /mcp": "always 405: there is no server-initiated stream" };

describe("the data of every success answer", () => {
  it("names its schema, unless the operation says its answers are not envelopes", async () => {
    const document = await openApi();
    const components = (document.components as { schemas: Record<string, unknown> }).schemas;
    const untyped: string[] = [];
    const successless: string[] = [];
    for (const operation of OPERATIONS) {
      const responses = (document.paths as Operations)[operation.path]?.[operation.method]
        ?.responses as Record<string, JsonSchema>;
      const successes = Object.keys(responses).filter((status) => /^2/.test(status));
      if (successes.length === 0 && !NO_SUCCESS[`${operation.method} ${operation.path}`]) {
        successless.push(`${operation.method} ${operation.path}`);
      }
      for (const status of successes) {
        const where = `${operation.method} ${operation.path} ${status}`;
        if (operation.notEnvelope) {
          // Explicitly not an envelope: a protocol or a standard owns the shape.
          expect(JSON.stringify(responses[status]), where).not.toContain("/Envelope");
          continue;
        }
        const branches = dataBranches(document, operation.method, operation.path, status);
        if (!branches) {
          untyped.push(where);
          continue;
        }
        for (const name of branches.flatMap((branch) => branch.components)) {
          expect(Object.keys(components), where).toContain(name);
          expect([...ZOD_OF_COMPONENT.keys()], `${where}: ${name} has a zod schema`).toContain(name);
        }
      }
    }
    expect(
      untyped,
      "a success envelope's data needs a schema: envelope(description, component) of src/specs/operation.ts, or notEnvelope on an operation whose answers are not envelopes",
    ).toEqual([]);
    expect(successless, "document the success answer of these operations").toEqual([]);
  });

  it("types a tool call's data per tool: the tool's output, or a summary and handle when too large", async () => {
    const document = await openApi();
    const branches = dataBranches(document, "post", "/v1/runs/{run_id}/calls", "200") ?? [];
    const tools = [...new Set(catalog.all().map((tool) => tool.name))];
    expect(branches.map((branch) => branch.tool).sort()).toEqual(tools.sort());
    for (const tool of catalog.all()) {
      const branch = branches.find((candidate) => candidate.tool === tool.name);
      const output = [...TOOL_OUTPUTS.schemas].find(([, schema]) => schema === tool.output)?.[0];
      expect(branch?.components, tool.name).toEqual([output, "LargeResult"]);
    }
    const components = (document.components as { schemas: Record<string, JsonSchema> }).schemas;
    expect(components.LookupOrderOutput).toBeDefined();
    // read_result_page answers a ResultPage: the same component the REST page route answers.
    expect(branches.find((branch) => branch.tool === "read_result_page")?.components[0]).toBe("ResultPage");
    for (const [name, schema] of TOOL_OUTPUTS.schemas) {
      expect(components[name], name).toEqual(
        withoutDialect(z.toJSONSchema(schema, { io: "output", target: "draft-2020-12" })),
      );
    }
    // The large-result summary is the shaping code's own type.
    expectTypeOf<z.infer<typeof LargeResultSchema>["summary"]>().toEqualTypeOf<ResultSummary>();
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

  it("names tool outputs uniquely when namespaces share a tool name", () => {
    const lookup = catalog.find("support", "lookup_order");
    const builtin = catalog.find("support", "read_result_page");
    if (!lookup || !builtin) throw new Error("the support namespace has lookup_order and read_result_page");
    const billing = { ...lookup, namespace: "billing", output: z.object({ invoice_id: z.string() }) };
    const { schemas, answers } = toolOutputComponents([
      lookup,
      builtin,
      billing,
      { ...builtin, namespace: "billing" },
    ]);
    expect([...schemas.keys()]).toEqual(["LookupOrderOutput", "ResultPage", "BillingLookupOrderOutput"]);
    expect(answers).toEqual([
      {
        tool: "lookup_order",
        namespaces: ["support", "billing"],
        outputs: ["LookupOrderOutput", "BillingLookupOrderOutput"],
      },
      { tool: "read_result_page", namespaces: ["support", "billing"], outputs: ["ResultPage"] },
    ]);
  });

  it("parses with its documented zod schema on every route, for real answers", async () => {
    const document = await openApi();
    const checked = new Set<string>();
    let lastMatch: string | undefined;
    async function check(method: string, path: string, answer: Promise<{ status: number; body: Envelope }>) {
      const { status, body } = await answer;
      const where = `${method} ${path} ${status}`;
      expect(body.error, where).toBeNull();
      const branches = dataBranches(document, method, path, String(status)) ?? [];
      const branch = branches.find(
        (candidate) => candidate.tool === undefined || candidate.tool === body.tool,
      );
      expect(branch, `${where}: a documented shape for tool ${body.tool}`).toBeDefined();
      // The data parses with one of the branch's schemas, and loses nothing doing so.
      const attempts = (branch?.components ?? []).map((name) => {
        const parsed = ZOD_OF_COMPONENT.get(name)?.safeParse(body.data);
        return { name, parsed };
      });
      const match = attempts.find(({ parsed }) => parsed?.success);
      expect(
        match?.name,
        `the data of ${where}: ${JSON.stringify(attempts.map(({ name, parsed }) => [name, parsed?.error?.issues]))}`,
      ).toBeDefined();
      if (branch?.tool !== undefined) expect(match?.parsed?.data, where).toEqual(body.data);
      lastMatch = match?.name;
      checked.add(where);
      return body.data as Record<string, unknown>;
    }
    const matched: string[] = [];
    async function call(run: TestRun, tool: string, args: unknown) {
      const data = await check("post", "/v1/runs/{run_id}/calls", callTool(run, tool, args));
      matched.push(`${tool}: ${lastMatch}`);
      return data;
    }

    await check("get", "/healthz", request("/healthz"));
    await check(
      "get",
      "/v1/tools",
      request("/v1/tools?namespace=support", { headers: { authorization: `Bearer ${KEYS.acme}` } }),
    );
    // A scenario that taints the run and makes a paged result, so optional and nullable parts are filled;
    // a task key, so opening it again is the documented 200.
    const openBody = JSON.stringify({
      namespace: "support",
      limits: { max_destructive: 2 },
      scenario: [
        { mode: "injection", path_prefix: "/customers" },
        { mode: "large", path_prefix: "/refund-policies" },
      ],
      task_key: `openapi-${Date.now()}`,
    });
    const openRequest = () =>
      request("/v1/runs", {
        method: "POST",
        headers: { authorization: `Bearer ${KEYS.acme}`, "content-type": "application/json" },
        body: openBody,
      });
    const opened = await check("post", "/v1/runs", openRequest());
    await check("post", "/v1/runs", openRequest());
    expect(opened.scenario).toHaveLength(2);
    const run: TestRun = {
      id: String(opened.run_id),
      token: String(opened.run_token),
      tenant: "acme",
      data: opened,
    };
    const asAgent = { headers: { authorization: `Bearer ${run.token}` } };

    await call(run, "lookup_order", { order_id: "A1001" });
    await call(run, "get_customer_profile", { customer_id: "C100" });
    const large = await call(run, "search_refund_policy", { query: "refund" });
    const handle = String(large.handle);
    await call(run, "read_result_page", { handle, cursor: 0 });
    expect(matched).toEqual([
      "lookup_order: LookupOrderOutput",
      "get_customer_profile: GetCustomerProfileOutput",
      "search_refund_policy: LargeResult",
      "read_result_page: ResultPage",
    ]);
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
    await check("get", "/v1/metrics", asOperator("/v1/metrics?bucket=day"));
    await check("get", "/v1/value-usage", asOperator("/v1/value-usage", {}, "globex"));
    await check("get", "/v1/runs", asOperator("/v1/runs?subject=A1001"));
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
    // The decisions and the refund they executed, as the audit log's receipts.
    const audit = await check("get", "/v1/audit", asOperator(`/v1/audit?run_id=${run.id}`));
    expect((audit.receipts as unknown[]).length).toBe(3);
    const trace = await check("get", "/v1/runs/{run_id}/trace", request(`/v1/runs/${run.id}/trace`, asAgent));
    expect((trace.entries as unknown[]).length).toBeGreaterThan(4);
    const added = await check(
      "post",
      "/v1/runs/{run_id}/tools",
      request(`/v1/runs/${run.id}/tools`, {
        method: "POST",
        headers: { ...asAgent.headers, "content-type": "application/json" },
        body: JSON.stringify({ tools: ["search_refund_policy"] }),
      }),
    );
    expect(added).toMatchObject({ namespace: "support" });
    const ended = await check(
      "post",
      "/v1/runs/{run_id}/end",
      request(`/v1/runs/${run.id}/end`, { method: "POST", ...asAgent }),
    );
    expect(ended).toMatchObject({ state: "closed", ended_at: expect.any(String) });

    // Every typed success answer of the document was met.
    const typed = envelopeSuccesses(document).filter((answer) => {
      const [method, path, code] = answer.split(" ") as [string, string, string];
      return dataBranches(document, method, path, code) !== undefined;
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

  it("shows commands against the origin it was read from, never a hard-coded one", async () => {
    const page = await (await get("/docs", "https://tools.example.com")).text();
    expect(page).toContain("curl -s -X POST https://tools.example.com/v1/runs ");
    expect(page).toContain("URL https://tools.example.com/mcp");
    expect(page).toContain("https://tools.example.com/v1/tools?namespace=support&amp;format=openai");
    expect(page).not.toContain("127.0.0.1");
    const local = await (await get("/docs", "http://127.0.0.1:8787")).text();
    expect(local).toContain("curl -s -X POST http://127.0.0.1:8787/v1/runs ");
    expect(local).not.toContain("tools.example.com");
  });

  it("shows the demo tenant key in the sandbox environment only", async () => {
    expect(env.ENVIRONMENT).toBe("sandbox");
    const sandboxPage = await (await get("/docs")).text();
    expect(sandboxPage).toContain(`Bearer ${SANDBOX_DEMO_TENANT_KEY}`);
    expect(sandboxPage).not.toContain("&lt;tenant key&gt;");

    // A deploy has no RESIDENCY: only the local runtime simulates jurisdictions.
    const production = { ...env, ENVIRONMENT: "production", RESIDENCY: undefined };
    const response = await app.request("https://proxy.example.com/docs", {}, production);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).not.toContain(SANDBOX_DEMO_TENANT_KEY);
    expect(page).not.toMatch(/demo-key/);
    expect(TENANT_KEY_PLACEHOLDER).toBe("<tenant key>");
    expect(page).toContain("Bearer &lt;tenant key&gt;");
    expect(page).toContain("curl -s -X POST https://proxy.example.com/v1/runs ");
    // The document itself never carries a key, in either environment.
    const document = await app.request("https://proxy.example.com/openapi.json", {}, production);
    expect((await document.json()) as JsonSchema).toMatchObject({
      servers: [{ url: "https://proxy.example.com" }],
    });
  });

  it("escapes what it renders", () => {
    const page = String(
      renderDocsPage(
        {
          info: { title: "<script>alert(1)</script>", description: "a & b" },
          servers: [{ url: "https://x.example/<b>" }],
          tags: [],
          paths: {},
          components: { schemas: {}, securitySchemes: {} },
        },
        { tenantKey: "<i>key</i>" },
      ),
    );
    expect(page).not.toContain("<b>");
    expect(page).not.toContain("<i>key</i>");
    expect(page).toContain("Bearer &lt;i&gt;key&lt;/i&gt;");
    expect(page).not.toContain("<script>alert(1)</script>");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toContain("a &amp; b");
  });
});
