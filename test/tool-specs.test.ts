import { describe, expect, it } from "vitest";
import * as z from "zod";
import { loadCatalog } from "../src/catalog/catalog";
import { defineTool } from "../src/catalog/define-tool";
import { SPEC_FORMATS, type SpecFormat, specsFor } from "../src/specs/formats";
import { envelopeJsonSchema, type JsonSchema, looseObjects } from "../src/specs/json-schema";
import { estimateTokens } from "../src/specs/token-estimate";
import { catalog } from "../src/tools";
import anthropicGolden from "./golden/anthropic.support.json";
import openAiGolden from "./golden/openai.support.json";
import { KEYS, openRun, request } from "./helpers";

/** The schema a model fills, whatever the format wraps it in. */
function argumentSchemas(format: SpecFormat): JsonSchema[] {
  const { tools } = specsFor(catalog, "support", format);
  return tools.map((tool) => {
    if ("function" in tool) return tool.function.parameters;
    if ("inputSchema" in tool) return tool.inputSchema;
    return tool.input_schema;
  });
}

/** Every node of a JSON Schema, with its path, for checks that must hold at every depth. */
function* nodes(schema: unknown, path = ""): Generator<[string, JsonSchema]> {
  if (Array.isArray(schema)) {
    for (const [index, item] of schema.entries()) yield* nodes(item, `${path}/${index}`);
    return;
  }
  if (typeof schema !== "object" || schema === null) return;
  yield [path || "/", schema as JsonSchema];
  for (const [keyword, value] of Object.entries(schema)) yield* nodes(value, `${path}/${keyword}`);
}

const gets = (path: string, token: string) =>
  request(path, { headers: { authorization: `Bearer ${token}` } });

describe("generated tool specs", () => {
  // The golden files are the reviewed contract a model sees; a change to them is a change of prompt.
  // test/golden/README.md says how to regenerate them when the change is intended.
  it("matches the golden OpenAI specs of the support namespace", () => {
    expect(specsFor(catalog, "support", "openai").tools).toEqual(openAiGolden);
  });

  it("matches the golden Anthropic specs of the support namespace", () => {
    expect(specsFor(catalog, "support", "anthropic").tools).toEqual(anthropicGolden);
  });

  it.each(SPEC_FORMATS)("%s: every object of every argument schema refuses unknown fields", (format) => {
    const schemas = argumentSchemas(format);
    expect(schemas).toHaveLength(catalog.tools("support").length);
    for (const schema of schemas) {
      expect(schema.type).toBe("object");
      expect(looseObjects(schema)).toEqual([]);
    }
  });

  it("the strictness check itself finds a loose object at any depth", () => {
    const loose = z.toJSONSchema(z.strictObject({ inner: z.object({ a: z.string() }).loose() }));
    expect(looseObjects(loose)).toEqual(["/properties/inner"]);
    expect(looseObjects(z.toJSONSchema(z.record(z.string(), z.string())))).toEqual(["/"]);
    expect(looseObjects(z.toJSONSchema(z.record(z.string(), z.string())), { allowMaps: true })).toEqual([]);
  });

  it("OpenAI specs are strict: every property required, optional ones nullable, no unsupported keywords", () => {
    const { tools } = specsFor(catalog, "support", "openai");
    for (const tool of tools) {
      expect(tool.type).toBe("function");
      expect(tool.function.strict).toBe(true);
      for (const [path, node] of nodes(tool.function.parameters)) {
        for (const keyword of ["$schema", "minLength", "maxLength"]) {
          expect(node, `${tool.function.name} ${path}`).not.toHaveProperty(keyword);
        }
        if (node.type === "object") {
          expect(node.required, `${tool.function.name} ${path}`).toEqual(
            Object.keys(node.properties as object),
          );
        }
      }
    }
    const draft = tools.find((tool) => tool.function.name === "draft_customer_email");
    const properties = draft?.function.parameters.properties as Record<string, JsonSchema>;
    expect(properties.order_id?.type).toEqual(["string", "null"]);
    expect(properties.customer_id?.type).toBe("string");
    // A length bound OpenAI cannot enforce is told to the model instead.
    const search = tools.find((tool) => tool.function.name === "search_refund_policy");
    const query = (search?.function.parameters.properties as Record<string, JsonSchema> | undefined)?.query;
    expect(query?.description).toMatch(/3 to 200 characters\.$/);
  });

  it("Anthropic specs keep every constraint the zod schema states", () => {
    const { tools } = specsFor(catalog, "support", "anthropic");
    const search = tools.find((tool) => tool.name === "search_refund_policy");
    expect(search?.input_schema).not.toHaveProperty("$schema");
    expect(search?.input_schema.properties).toMatchObject({ query: { minLength: 3, maxLength: 200 } });
  });

  it("builds every description from the four parts, in order", () => {
    for (const format of SPEC_FORMATS) {
      for (const spec of specsFor(catalog, "support", format).tools) {
        const description = "function" in spec ? spec.function.description : spec.description;
        expect(description.split("\n").map((line) => line.split(":")[0])).toEqual([
          expect.any(String),
          "Use when",
          "Do not use when",
          "Side effects",
        ]);
      }
    }
  });

  it("MCP output schemas describe the envelope with the tool's own data whitelist", () => {
    const lookup = catalog.find("support", "lookup_order");
    if (!lookup) throw new Error("lookup_order is missing from the demo catalog");
    const schema = envelopeJsonSchema(lookup);
    expect(schema.required).toEqual(expect.arrayContaining(["outcome", "idempotency_key", "data", "error"]));
    const data = (schema.properties as Record<string, JsonSchema>).data;
    expect(JSON.stringify(data)).toContain('"refundable_cents"');
    expect(JSON.stringify(data)).not.toContain("internal_notes");
    // Objects with named fields are closed; only free-form maps (error.details) stay open.
    expect(looseObjects(schema, { allowMaps: true })).toEqual([]);
  });

  it("shows a namespace's tools only in that namespace", () => {
    const tool = (name: string, namespace: string) =>
      defineTool({
        name,
        namespace,
        version: "1",
        title: name,
        side_effect: "read",
        description: {
          does: "Returns a thing for the test.",
          use_when: "The test needs a tool here.",
          avoid_when: "Never outside this test.",
          side_effects: "None at all, it is a test.",
        },
        input: z.strictObject({ id: z.string().describe("The id of the thing.") }),
        output: z.object({ id: z.string() }),
        upstream: { binding: "ORDERS_API", request: () => ({ method: "GET", path: "/" }) },
        timeout_ms: 1_000,
      });
    const twoNamespaces = loadCatalog([tool("read_public", "public"), tool("read_secret", "internal")]);
    for (const format of SPEC_FORMATS) {
      const names = specsFor(twoNamespaces, "public", format).tools.map((spec) =>
        "function" in spec ? spec.function.name : spec.name,
      );
      expect(names, format).toEqual(["read_public"]);
    }
    expect(specsFor(twoNamespaces, "nowhere", "mcp").tools).toEqual([]);
  });
});

describe("token estimate", () => {
  it("is the compact JSON length over four, rounded up", () => {
    expect(estimateTokens({ a: 1 })).toBe(2);
    expect(estimateTokens("x".repeat(98))).toBe(25);
  });

  it.each(SPEC_FORMATS)(
    "%s: stays within 15% of OpenAI's o200k_base tokenizer on the demo namespace",
    async (format) => {
      const { encode } = await import("gpt-tokenizer/encoding/o200k_base");
      const specs = specsFor(catalog, "support", format);
      const actual = encode(JSON.stringify(specs.tools)).length;
      expect(specs.token_estimate.total / actual).toBeGreaterThan(0.85);
      expect(specs.token_estimate.total / actual).toBeLessThan(1.15);
      const perTool = Object.values(specs.token_estimate.per_tool);
      expect(perTool).toHaveLength(specs.tools.length);
    },
  );

  it("keeps the demo namespace lean for a model: under 2,500 tokens for OpenAI or Anthropic", () => {
    for (const format of ["openai", "anthropic"] as const) {
      const { token_estimate } = specsFor(catalog, "support", format);
      expect(token_estimate.total, format).toBeLessThan(2_500);
      for (const [name, tokens] of Object.entries(token_estimate.per_tool)) {
        expect(tokens, `${format} ${name}`).toBeLessThan(350);
      }
    }
  });
});

describe("GET /v1/tools", () => {
  it("gives a tenant key ready-to-paste specs of its namespace, with their token cost", async () => {
    const { status, body } = await gets("/v1/tools?namespace=support&format=openai", KEYS.acme);
    expect(status).toBe(200);
    const data = body.data as {
      namespace: string;
      format: string;
      tools: unknown[];
      token_estimate: { total: number };
    };
    expect(data.namespace).toBe("support");
    expect(data.format).toBe("openai");
    expect(data.tools).toEqual(specsFor(catalog, "support", "openai").tools);
    expect(data.token_estimate.total).toBe(estimateTokens(data.tools));
  });

  it.each(SPEC_FORMATS)("serves format=%s", async (format) => {
    const { status, body } = await gets(`/v1/tools?namespace=support&format=${format}`, KEYS.globex);
    expect(status).toBe(200);
    expect((body.data as { tools: unknown[] }).tools).toEqual(specsFor(catalog, "support", format).tools);
  });

  it("defaults to the run's own namespace and the neutral format for a run token", async () => {
    const run = await openRun();
    const { status, body } = await gets("/v1/tools", run.token);
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ namespace: "support", format: "jsonschema" });
    // The same specs a run gets when it is opened.
    expect((body.data as { tools: unknown[] }).tools).toEqual(run.data.tools);
  });

  it("refuses an unknown format with the allowed values", async () => {
    const { status, body } = await gets("/v1/tools?namespace=support&format=gemini", KEYS.acme);
    expect(status).toBe(422);
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems[0]?.field).toBe("query.format");
    expect(body.error?.problems[0]?.hint).toContain('"openai", "anthropic", "mcp", "jsonschema"');
  });

  it("refuses a misspelt parameter instead of ignoring it", async () => {
    const { status, body } = await gets("/v1/tools?namespace=support&formats=openai", KEYS.acme);
    expect(status).toBe(422);
    expect(body.error?.problems[0]).toMatchObject({ field: "query.formats", reason: "unknown field" });
    expect(body.error?.problems[0]?.hint).toContain('Did you mean "format"?');
  });

  it("asks a tenant key to name the namespace", async () => {
    const { status, body } = await gets("/v1/tools?format=openai", KEYS.acme);
    expect(status).toBe(422);
    expect(body.error?.problems[0]).toMatchObject({
      field: "query.namespace",
      reason: "missing required field",
    });
    expect(body.error?.problems[0]?.hint).toContain("support");
  });

  it("answers a namespace outside the tenant's config or the run's token as not_found", async () => {
    const tenant = await gets("/v1/tools?namespace=billing&format=openai", KEYS.acme);
    expect(tenant.status).toBe(404);
    expect(tenant.body.error?.code).toBe("not_found");
    expect(tenant.body.error?.details).toEqual({ namespaces: ["support"] });

    const run = await openRun();
    const other = await gets("/v1/tools?namespace=billing", run.token);
    expect(other.status).toBe(404);
    expect(other.body.error?.details).toEqual({ namespaces: ["support"] });
  });

  it("refuses a missing, unknown or expired credential with 401", async () => {
    const none = await request("/v1/tools?namespace=support");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect(none.body.error?.code).toBe("permission_error");

    const wrong = await gets("/v1/tools?namespace=support", "not-a-real-tenant-key");
    expect(wrong.status).toBe(401);

    const run = await openRun();
    const forged = await gets("/v1/tools", `${run.token.slice(0, -4)}AAAA`);
    expect(forged.status).toBe(401);
    expect(forged.body.error?.message).toBe("The run token is not valid.");
  });
});
