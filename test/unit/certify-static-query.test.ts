import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { runCertify } from "../../scripts/tools/certify";
import { importOpenApi } from "../../scripts/tools/import-openapi.mjs";
import { CertificationRecordSchema, certificationOf } from "../../src/catalog/certification";
import type { CatalogFile } from "../../src/catalog/declaration";
import { fillMarkers } from "../fixtures/postcodes-review";
import { startPostcodesUpstream } from "../fixtures/postcodes-upstream.mjs";

/**
 * `npm run tools -- certify` of a namespace whose upstreams take their key in the query
 * (`static_query`, `api_key`) and in a header (`static_header`, `user_token`), as imported from the
 * postcode document and reviewed (test/unit/fixtures/openapi/postcodes.yaml), against its API on
 * loopback: the read with a valid credential carries the key where the declaration puts it, never
 * the proxy's JWT; without it, or with a wrong one, the API refuses, and the record says the upstream
 * requires its credential.
 */

const root = fileURLToPath(new URL("../..", import.meta.url));
const DOCUMENT = join(root, "test", "unit", "fixtures", "openapi", "postcodes.yaml");
const SECRETS = { apiKey: "pc-certify-key-51d0", userToken: "pc-certify-token-a7e2" };
const ENV = { POSTCODES_API_KEY: SECRETS.apiKey, POSTCODES_USER_TOKEN_API_KEY: SECRETS.userToken };

let dir = "";
let vendor: Awaited<ReturnType<typeof startPostcodesUpstream>>;
const output: string[] = [];
const certify = (args: string[]) =>
  runCertify(
    root,
    ["postcodes", "--catalog", dir, "--url", vendor.url, "--tenant", "acme", ...args],
    (line) => output.push(line),
    (line) => output.push(line),
  );

/** Sets the environment certify reads secrets from for one test; `undefined` unsets a name. */
function withEnv(values: Record<string, string | undefined>) {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "certify-query-"));
  vendor = await startPostcodesUpstream(SECRETS);
  const { declaration } = await importOpenApi(DOCUMENT, { namespace: "postcodes" });
  const reviewed = fillMarkers(declaration) as CatalogFile;
  // What a certification sends for each tool: certify.args, declared beside the tool.
  const args: Record<string, Record<string, unknown>> = {
    get_postcode: { postcode: "SW1A 1AA" },
    list_postcodes: { q: "SW1A" },
    get_udprn: { udprn: 23747771 },
  };
  const tools = reviewed.tools.map((tool) => ({ ...tool, certify: { args: args[tool.name] ?? {} } }));
  writeFileSync(join(dir, "postcodes.yaml"), YAML.stringify({ ...reviewed, tools }));
});
afterAll(async () => {
  await vendor?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  output.length = 0;
  withEnv({ POSTCODES_API_KEY: undefined, POSTCODES_USER_TOKEN_API_KEY: undefined });
});

describe("certify of an upstream that takes its key in the query", () => {
  it("sends the key in the declared query parameter, and certifies an API that refuses requests without it", async () => {
    withEnv(ENV);
    const before = vendor.requests.length;
    expect(await certify([]), output.join("\n")).toBe(0);
    const record = CertificationRecordSchema.parse(
      JSON.parse(readFileSync(join(dir, "postcodes.certification.json"), "utf8")),
    );
    const query = record.upstreams.POSTCODES_API;
    expect(query?.verdict).toBe("pass");
    expect(query?.probes.map((probe) => [probe.tool, probe.probe, probe.result])).toEqual([
      ["get_postcode", "no_credential", "pass"],
      ["get_postcode", "forged_credential", "pass"],
      ["get_postcode", "credential_for_other_request", "skipped"],
    ]);
    // Reads only: no key to reuse, and the credential shown to be required.
    expect(certificationOf(record, "POSTCODES_API", query?.digest ?? "")).toMatchObject({
      key_reuse: null,
      credential: "pass",
    });
    expect(record.upstreams.POSTCODES_USER_TOKEN_API?.verdict).toBe("pass");

    // The read with a valid credential carried the key as `api_key`, and no JWT; the probes sent
    // none, then a wrong one, in the same place.
    const lookups = vendor.requests
      .slice(before)
      .filter((request) => request.path === "/v2/postcodes/SW1A%201AA");
    expect(lookups.map((request) => new URLSearchParams(request.query).get("api_key"))).toEqual([
      SECRETS.apiKey,
      null,
      expect.not.stringContaining(SECRETS.apiKey),
    ]);
    for (const request of lookups) expect(request.headers.authorization).toBeUndefined();
    expect(output.join("\n")).not.toContain(SECRETS.apiKey);
  });

  it("refuses to certify without the key's secret, naming it, and sends nothing in its place", async () => {
    withEnv({ ...ENV, POSTCODES_API_KEY: undefined });
    const before = vendor.requests.length;
    expect(await certify([])).toBe(1);
    expect(output.join("\n")).toMatch(
      /secret POSTCODES_API_KEY is not set: the proxy sends POSTCODES_API nothing without it/,
    );
    expect(
      vendor.requests.slice(before).filter((request) => request.headers.authorization !== undefined),
    ).toEqual([]);
  });
});
