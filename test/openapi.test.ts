import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { app } from "../src/app";
import { EnvelopeSchema } from "../src/envelope";
import { OpenRunBodySchema } from "../src/routes/runs";
import { renderDocsPage } from "../src/specs/docs-page";
import type { JsonSchema } from "../src/specs/json-schema";
import { documentedRoutes, UNDOCUMENTED_PREFIXES } from "../src/specs/openapi-operations";

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
      enum: ["openai", "anthropic", "mcp", "jsonschema"],
      default: "jsonschema",
    });
    expect(operation?.security).toEqual([{ tenantKey: [] }, { runToken: [] }]);
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
