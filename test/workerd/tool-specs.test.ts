import { Ajv, addFormats } from "@modelcontextprotocol/server/validators/ajv";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { loadCatalog } from "../../src/catalog/catalog";
import { defineTool } from "../../src/catalog/define-tool";
import { type AnySpec, specsFor } from "../../src/specs/formats";
import { toGeminiSchema } from "../../src/specs/gemini";
import {
  envelopeJsonSchema,
  type JsonSchema,
  looseObjects,
  withoutDialect,
} from "../../src/specs/json-schema";
import { estimateTokens } from "../../src/specs/token-estimate";
import { catalog } from "../../src/tools";
import { SPEC_FORMATS, type SpecFormat } from "../../src/wire/requests";
import anthropicGolden from "./golden/anthropic.support.json";
import geminiGolden from "./golden/gemini.support.json";
import openAiGolden from "./golden/openai.support.json";
import openAiResponsesGolden from "./golden/openai-responses.support.json";
import { KEYS, namespacesOf, openRun, request } from "./helpers";

/** The schema a model fills, whatever the format wraps it in. */
function argumentSchema(tool: AnySpec): JsonSchema {
  if ("function" in tool) return tool.function.parameters;
  if ("inputSchema" in tool) return tool.inputSchema;
  if ("parameters" in tool) return tool.parameters;
  return tool.input_schema;
}

function argumentSchemas(format: SpecFormat): JsonSchema[] {
  return specsFor(catalog, "support", format).tools.map(argumentSchema);
}

const toolName = (spec: AnySpec) => ("function" in spec ? spec.function.name : spec.name);

/** Formats whose schemas follow OpenAI's strict mode: every property required, optional ones nullable. */
const STRICT_FORMATS = ["openai", "openai-responses"] as const satisfies readonly SpecFormat[];

/**
 * A valid call of every tool of the demo namespace, optional fields left out. The names must match
 * the catalog's, so a new tool must bring its own sample.
 */
const SAMPLE_CALLS: Record<string, Record<string, unknown>> = {
  lookup_order: { order_id: "A1001" },
  search_refund_policy: { query: "damaged item" },
  get_customer_profile: { customer_id: "C100" },
  draft_customer_email: { customer_id: "C100", template: "apology" },
  create_internal_ticket: { customer_id: "C100", priority: "high", summary: "The parcel arrived broken." },
  lookup_ticket: { ticket_id: "tk_4Fz0aQ9mW2xYc7Lp1Rt8Vb" },
  issue_refund: { order_id: "A1001", amount_cents: 1999, reason: "price_error" },
  send_customer_email: { draft_id: "dr_4Fz0aQ9mW2xYc7Lp1Rt8Vb", draft_version: 1 },
  lookup_email: { email_id: "em_4Fz0aQ9mW2xYc7Lp1Rt8Vb" },
  read_result_page: { handle: "res_0123456789abcdef01234567" },
};

/**
 * Every keyword Gemini's `Schema` (the OpenAPI 3.0 subset of `functionDeclarations[].parameters`)
 * accepts that the proxy may write; an unknown keyword fails the whole Gemini request with
 * "Invalid JSON payload received. Unknown name ...". `additionalProperties` and `$schema` are not
 * among them.
 */
const GEMINI_KEYWORDS = new Set([
  "type",
  "format",
  "description",
  "nullable",
  "enum",
  "properties",
  "required",
  "items",
  "anyOf",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "minProperties",
  "maxProperties",
]);
const GEMINI_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object"]);
/** The `format` values the Gemini API accepts, by type. */
const GEMINI_FORMATS: Record<string, string[]> = {
  string: ["enum", "date-time"],
  number: ["float", "double"],
  integer: ["int32", "int64"],
};

/** Every schema node of a Gemini schema (itself, its properties, items and anyOf branches), with its path. */
function* geminiNodes(schema: JsonSchema, path = "/"): Generator<[string, JsonSchema]> {
  yield [path, schema];
  const at = (rest: string) => `${path === "/" ? "" : path}/${rest}`;
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)) {
    yield* geminiNodes(property, at(`properties/${name}`));
  }
  if (schema.items) yield* geminiNodes(schema.items as JsonSchema, at("items"));
  for (const [index, branch] of ((schema.anyOf ?? []) as JsonSchema[]).entries()) {
    yield* geminiNodes(branch, at(`anyOf/${index}`));
  }
}

/** The reasons a schema is outside Gemini's accepted subset; empty when it is inside. */
function geminiViolations(schema: JsonSchema): string[] {
  const found: string[] = [];
  for (const [path, node] of geminiNodes(schema)) {
    for (const keyword of Object.keys(node)) {
      if (!GEMINI_KEYWORDS.has(keyword)) found.push(`${path}: keyword ${keyword}`);
    }
    const type = node.type;
    if (type !== undefined && !(typeof type === "string" && GEMINI_TYPES.has(type))) {
      found.push(`${path}: type ${JSON.stringify(type)}`);
    }
    if ("nullable" in node && node.nullable !== true) found.push(`${path}: nullable must be true`);
    if (node.enum !== undefined) {
      const values = node.enum;
      if (type !== "string" || !Array.isArray(values) || !values.every((v) => typeof v === "string")) {
        found.push(`${path}: enum on a non-string`);
      }
    }
    if (node.format !== undefined) {
      const allowed = typeof type === "string" ? (GEMINI_FORMATS[type] ?? []) : [];
      if (!allowed.includes(node.format as string)) found.push(`${path}: format ${String(node.format)}`);
    }
    if (node.required !== undefined) {
      const names = Object.keys((node.properties ?? {}) as object);
      const required = node.required as string[];
      if (type !== "object" || !required.every((name) => names.includes(name))) {
        found.push(`${path}: required names a missing property`);
      }
    }
  }
  return found;
}

/**
 * Ajv in strict mode: an unknown keyword, a keyword on the wrong type or a `required` name without
 * a property fails compilation. `nullable` is Ajv's OpenAPI keyword, so Gemini schemas compile too.
 */
function strictAjv(): InstanceType<typeof Ajv> {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  return ajv;
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
  // test/workerd/golden/README.md says how to regenerate them when the change is intended.
  it("matches the golden OpenAI specs of the support namespace", () => {
    expect(specsFor(catalog, "support", "openai").tools).toEqual(openAiGolden);
  });

  it("matches the golden OpenAI Responses specs of the support namespace", () => {
    expect(specsFor(catalog, "support", "openai-responses").tools).toEqual(openAiResponsesGolden);
  });

  it("matches the golden Anthropic specs of the support namespace", () => {
    expect(specsFor(catalog, "support", "anthropic").tools).toEqual(anthropicGolden);
  });

  it("matches the golden Gemini specs of the support namespace", () => {
    expect(specsFor(catalog, "support", "gemini").tools).toEqual(geminiGolden);
  });

  // Gemini refuses `additionalProperties`: its objects cannot be closed, so the proxy's own
  // validation refuses an unknown field instead (checked with Ajv below).
  const closable = SPEC_FORMATS.filter((format) => format !== "gemini");
  it.each(closable)("%s: every object of every argument schema refuses unknown fields", (format) => {
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

  it.each(STRICT_FORMATS)(
    "%s specs are strict: every property required, optional ones nullable, no unsupported keywords",
    (format) => {
      const { tools } = specsFor(catalog, "support", format);
      const fns = tools.map((tool) => ("function" in tool ? tool.function : tool));
      for (const tool of tools) expect(tool.type).toBe("function");
      for (const fn of fns) {
        expect(fn.strict).toBe(true);
        for (const [path, node] of nodes(fn.parameters)) {
          for (const keyword of ["$schema", "minLength", "maxLength"]) {
            expect(node, `${fn.name} ${path}`).not.toHaveProperty(keyword);
          }
          if (node.type === "object") {
            expect(node.required, `${fn.name} ${path}`).toEqual(Object.keys(node.properties as object));
            expect(node.additionalProperties, `${fn.name} ${path}`).toBe(false);
          }
        }
      }
      const draft = fns.find((fn) => fn.name === "draft_customer_email");
      const properties = draft?.parameters.properties as Record<string, JsonSchema>;
      expect(properties.order_id?.type).toEqual(["string", "null"]);
      expect(properties.customer_id?.type).toBe("string");
      // A length bound OpenAI cannot enforce is told to the model instead.
      const search = fns.find((fn) => fn.name === "search_refund_policy");
      const query = (search?.parameters.properties as Record<string, JsonSchema> | undefined)?.query;
      expect(query?.description).toMatch(/3 to 200 characters\.$/);
    },
  );

  it("OpenAI Responses specs are the Chat Completions function, flat beside type", () => {
    const chat = specsFor(catalog, "support", "openai").tools;
    const responses = specsFor(catalog, "support", "openai-responses").tools;
    expect(responses).toEqual(chat.map((tool) => ({ type: "function", ...tool.function })));
    for (const tool of responses) {
      expect(Object.keys(tool)).toEqual(["type", "name", "description", "parameters", "strict"]);
    }
  });

  it("Gemini specs use only the schema keywords, types and formats Gemini accepts", () => {
    const { tools } = specsFor(catalog, "support", "gemini");
    expect(tools.map((tool) => tool.name)).toEqual(catalog.tools("support").map((tool) => tool.name));
    for (const tool of tools) {
      expect(Object.keys(tool)).toEqual(["name", "description", "parameters"]);
      // Gemini's rule for function names: a letter or underscore, then up to 63 of [A-Za-z0-9_.:-].
      expect(tool.name).toMatch(/^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/);
      expect(tool.parameters.type).toBe("object");
      expect(geminiViolations(tool.parameters), tool.name).toEqual([]);
      expect(JSON.stringify(tool.parameters)).not.toMatch(/"(\$schema|additionalProperties)"/);
    }
    // Optional is simply "not required" for Gemini: no nullable is invented for it.
    const draft = tools.find((tool) => tool.name === "draft_customer_email");
    expect(draft?.parameters.required).toEqual(["customer_id", "template"]);
    expect(draft?.parameters.properties).toMatchObject({ order_id: { type: "string" } });
    expect(draft?.parameters.properties).not.toHaveProperty("order_id.nullable");
    // Constraints Gemini's schema states are kept as hints for the model.
    const search = tools.find((tool) => tool.name === "search_refund_policy");
    expect(search?.parameters.properties).toMatchObject({ query: { minLength: 3, maxLength: 200 } });
  });

  it("Gemini schemas rewrite what the subset cannot say: null types, non-string enums, formats, bounds", () => {
    const input = z.toJSONSchema(
      z.strictObject({
        note: z.string().nullable().describe("A note."),
        level: z.enum(["low", "high"]).nullable().optional(),
        answer: z.literal(42),
        email: z.email(),
        positive: z.number().gt(0),
        tags: z.array(z.union([z.string(), z.number()])).min(1),
        when: z.iso.datetime(),
        child: z.strictObject({ ok: z.boolean() }).optional(),
      }),
      { io: "input", target: "draft-2020-12" },
    ) as JsonSchema;
    const gemini = toGeminiSchema(input);
    expect(geminiViolations(input)).not.toEqual([]);
    expect(geminiViolations(gemini)).toEqual([]);
    const properties = gemini.properties as Record<string, JsonSchema>;
    expect(properties.note).toEqual({ type: "string", description: "A note.", nullable: true });
    expect(properties.level).toEqual({ type: "string", enum: ["low", "high"], nullable: true });
    expect(properties.answer).toMatchObject({ type: "number", description: "Must be 42." });
    expect(properties.email).toMatchObject({ type: "string", description: "Format: email." });
    expect(properties.positive).toEqual({ type: "number", description: "Greater than 0." });
    expect(properties.tags).toEqual({
      type: "array",
      minItems: 1,
      items: { anyOf: [{ type: "string" }, { type: "number" }] },
    });
    expect(properties.when).toMatchObject({ type: "string", format: "date-time" });
    expect(properties.child).toEqual({
      type: "object",
      properties: { ok: { type: "boolean" } },
      required: ["ok"],
    });
    expect(gemini.required).toEqual(["note", "answer", "email", "positive", "tags", "when"]);
  });

  it("has a sample call for every tool of the demo namespace, valid for the proxy", () => {
    const tools = catalog.tools("support");
    expect(Object.keys(SAMPLE_CALLS).sort()).toEqual(tools.map((tool) => tool.name).sort());
    for (const tool of tools) {
      expect(tool.input.safeParse(SAMPLE_CALLS[tool.name]).success, tool.name).toBe(true);
    }
  });

  it.each(SPEC_FORMATS)(
    "%s: every argument schema compiles with Ajv (strict) and judges sample calls as the proxy does",
    (format) => {
      const ajv = strictAjv();
      const strict = (STRICT_FORMATS as readonly SpecFormat[]).includes(format);
      for (const spec of specsFor(catalog, "support", format).tools) {
        const name = toolName(spec);
        const schema = argumentSchema(spec);
        // The 2020-12 dialect mark is not needed: no catalog schema uses a keyword newer than draft-07.
        const validate = ajv.compile(withoutDialect(schema));
        const sample = SAMPLE_CALLS[name] ?? {};
        // Strict mode sends every property: an optional one left out is sent as null.
        const names = Object.keys((schema.properties ?? {}) as object);
        const call = strict ? { ...Object.fromEntries(names.map((n) => [n, null])), ...sample } : sample;
        expect(validate(call), `${format} ${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);

        const [first] = Object.keys(sample);
        expect(validate({ ...call, [first ?? "x"]: 12.5 }), `${format} ${name} wrong type`).toBe(false);
        // Gemini cannot close an object; the proxy's zod schema refuses the unknown field either way.
        expect(validate({ ...call, unexpected: 1 }), `${format} ${name} unknown field`).toBe(
          format === "gemini",
        );
        expect(catalog.find("support", name)?.input.safeParse({ ...sample, unexpected: 1 }).success).toBe(
          false,
        );
      }
    },
  );

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
        timeout_ms: 10_000,
        trusted_text: { id: "an id the test upstream issues" },
      });
    const twoNamespaces = loadCatalog([tool("read_public", "public"), tool("read_secret", "internal")]);
    for (const format of SPEC_FORMATS) {
      const names = specsFor(twoNamespaces, "public", format).tools.map(toolName);
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

  it("keeps the demo namespace lean for a model: under 2,500 tokens for every chat API format", () => {
    for (const format of ["openai", "openai-responses", "anthropic", "gemini"] as const) {
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

  it.each(SPEC_FORMATS)("serves format=%s with its token estimate", async (format) => {
    const { status, body } = await gets(`/v1/tools?namespace=support&format=${format}`, KEYS.globex);
    expect(status).toBe(200);
    const data = body.data as {
      format: string;
      tools: AnySpec[];
      token_estimate: { total: number; per_tool: Record<string, number>; method: string };
    };
    expect(data.format).toBe(format);
    expect(data.tools).toEqual(specsFor(catalog, "support", format).tools);
    expect(data.token_estimate.total).toBe(estimateTokens(data.tools));
    expect(data.token_estimate.per_tool).toEqual(
      Object.fromEntries(data.tools.map((tool) => [toolName(tool), estimateTokens(tool)])),
    );
    expect(data.token_estimate.method).toBe("ceil(characters of the compact JSON / 4)");
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
    const { status, body } = await gets("/v1/tools?namespace=support&format=llama", KEYS.acme);
    expect(status).toBe(422);
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems[0]?.field).toBe("query.format");
    expect(body.error?.problems[0]?.hint).toContain(
      '"openai", "openai-responses", "anthropic", "gemini", "mcp", "jsonschema"',
    );
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
    expect(tenant.body.error?.details).toEqual({ namespaces: namespacesOf("acme") });

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
