import { describe, expect, it } from "vitest";
import YAML from "yaml";
import { evaluateSchemas, schemaSources } from "../../scripts/tools/catalog-module";
import { type CatalogFile, CatalogFileSchema } from "../../src/catalog/declaration";
import { declaredTool } from "../../src/catalog/declared-tool";
import type { Env } from "../../src/env";
import { buildRequest } from "../../src/machine/request";
import { requestAuthorization } from "../../src/upstream/authorize";
import type { Upstream } from "../../src/upstream/bindings";
import { executeRequest } from "../../src/upstream/dispatch";

/**
 * An API that reads its key from a query parameter (`credential: { kind: static_query }`): the key
 * is added to each attempt's URL as it is sent, from the Workers secret, and appears nowhere the
 * proxy keeps or shows: not in the request stored under the call's key, not in the attempts the
 * trace records, not in the answer.
 */

const SECRET = "s3cr3t-value-of-the-key";

const NAMESPACE = CatalogFileSchema.parse(
  YAML.parse(`
format: 1
namespace: postcodes
upstreams:
  POSTCODES_API:
    base: { production: "https://postcodes.example.com/v1" }
    credential: { kind: static_query, param: api_key, secret: POSTCODES_API_KEY }
tools:
  - name: get_postcode
    version: "1"
    title: Look up a postcode
    side_effect: read
    description:
      does: Returns a postcode's district.
      use_when: A customer names a postcode.
      avoid_when: You have no postcode yet.
      side_effects: None. Reads only.
    timeout_ms: 5000
    input:
      type: object
      properties:
        postcode: { type: string, description: The postcode. }
        expand: { type: string, enum: [district], description: What to include. }
      required: [postcode]
    request:
      upstream: POSTCODES_API
      method: GET
      path: /postcodes/{postcode}
      query: { expand: { arg: /expand } }
    output:
      schema:
        type: object
        properties:
          district: { type: string, enum: [Westminster] }
`),
) as CatalogFile;

function tool() {
  const [declaration] = NAMESPACE.tools;
  if (!declaration) throw new Error("no tool");
  const schemas = evaluateSchemas(schemaSources(declaration));
  return declaredTool(NAMESPACE, declaration, () => schemas);
}

/** An upstream that answers 200 and remembers every URL and header it was sent. */
function recordingUpstream(): Upstream & { seen: { url: string; headers: [string, string][] }[] } {
  const seen: { url: string; headers: [string, string][] }[] = [];
  return {
    seen,
    fetch: async (request) => {
      seen.push({ url: request.url, headers: [...request.headers] });
      return Response.json({ district: "Westminster", api_key: "echoed by a careless API" });
    },
  };
}

const holder = { tenant: "acme", run: "run_1", notAfter: null };

describe("a key the API reads from the query", () => {
  it("is added to the sent URL from its secret, and kept out of the stored request, the attempts and the answer", async () => {
    const spec = tool();
    const stored = buildRequest(
      spec,
      { postcode: "SW1A 1AA", expand: "district" },
      { key: null, callId: "c1" },
    );
    expect(stored.target).toBe("/postcodes/SW1A%201AA?expand=district");
    const env = { POSTCODES_API_KEY: SECRET } as unknown as Env;
    const credential = await requestAuthorization(env, holder, spec, stored);
    const upstream = recordingUpstream();
    const execution = await executeRequest({
      tool: spec,
      request: stored,
      upstream,
      credential: async () => credential,
      deadlineAt: Date.now() + 10_000,
      traceparent: null,
    });

    const [sent] = upstream.seen;
    const url = new URL(sent?.url ?? "");
    expect(url.pathname).toBe("/postcodes/SW1A%201AA");
    expect(url.searchParams.get("api_key")).toBe(SECRET);
    expect(url.searchParams.get("expand")).toBe("district");
    // No header carries it, and the proxy's JWT is not sent beside it.
    expect(JSON.stringify(sent?.headers)).not.toContain(SECRET);
    expect(sent?.headers.some(([name]) => name === "authorization")).toBe(false);

    expect(execution).toMatchObject({ ok: true, data: { district: "Westminster" } });
    for (const kept of [stored, execution]) expect(JSON.stringify(kept)).not.toContain(SECRET);
    expect(JSON.stringify(execution)).not.toContain("api_key");
  });

  it("replaces a query parameter of the same name rather than sending two", async () => {
    const spec = tool();
    const stored = { ...buildRequest(spec, { postcode: "E1" }, { key: null, callId: "c2" }) };
    stored.target = "/postcodes/E1?api_key=from-the-model";
    const env = { POSTCODES_API_KEY: SECRET } as unknown as Env;
    const upstream = recordingUpstream();
    await executeRequest({
      tool: spec,
      request: stored,
      upstream,
      credential: async () => requestAuthorization(env, holder, spec, stored),
      deadlineAt: Date.now() + 10_000,
      traceparent: null,
    });
    expect(new URL(upstream.seen[0]?.url ?? "").searchParams.getAll("api_key")).toEqual([SECRET]);
  });
});
