import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeEach, describe, expect, it } from "vitest";
import { EnableError, enableNamespace } from "../../scripts/tools/enable.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("npm run tools -- enable", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "enable-"));
    for (const file of ["wrangler.toml", "secrets.production.example.json"]) {
      copyFileSync(join(root, file), join(dir, file));
    }
    mkdirSync(join(dir, "catalog"));
    writeFileSync(
      join(dir, "catalog", "warehouse.yaml"),
      [
        "format: 1",
        "namespace: warehouse",
        "upstreams:",
        "  WAREHOUSE_API:",
        "    credential: { kind: static_header, header: X-Api-Key, secret: WAREHOUSE_API_KEY }",
        "tools: []",
        "",
      ].join("\n"),
    );
  });
  const read = (file: string) => readFileSync(join(dir, file), "utf8");

  it("gives the tenant the namespace in each environment it exists in, comments and layout kept", () => {
    const before = read("wrangler.toml");
    const done = enableNamespace(dir, "warehouse", { tenant: "acme" });
    expect(done).toEqual([
      "wrangler.toml: tenant acme (sandbox) has warehouse",
      "wrangler.toml: tenant acme (production) has warehouse",
      "secrets.production.example.json: lists WAREHOUSE_API_KEY (set its value in .dev.vars for npm start)",
    ]);
    const after = read("wrangler.toml");
    expect(after.split("\n").length).toBe(before.split("\n").length);
    expect(after).toContain('namespaces = ["support", "shipping", "helpdesk", "warehouse"]');
    // Only acme's two lines changed.
    const changed = after.split("\n").filter((line, index) => line !== before.split("\n")[index]);
    expect(changed).toHaveLength(2);
    expect(JSON.parse(read("secrets.production.example.json"))).toHaveProperty("WAREHOUSE_API_KEY");
  });

  it("changes nothing the second time", () => {
    enableNamespace(dir, "warehouse", { tenant: "acme" });
    const toml = read("wrangler.toml");
    expect(enableNamespace(dir, "warehouse", { tenant: "acme" })).toEqual([]);
    expect(read("wrangler.toml")).toBe(toml);
  });

  it("touches one environment when asked, and only tenants that exist there", () => {
    expect(enableNamespace(dir, "warehouse", { tenant: "initech", environments: ["sandbox"] })[0]).toBe(
      "wrangler.toml: tenant initech (sandbox) has warehouse",
    );
    expect(() =>
      enableNamespace(dir, "warehouse", { tenant: "initech", environments: ["production"] }),
    ).toThrow(EnableError);
  });

  it("refuses an unknown tenant or an undeclared namespace, and leaves the files as they were", () => {
    const toml = read("wrangler.toml");
    expect(() => enableNamespace(dir, "warehouse", { tenant: "vandelay" })).toThrow(/no tenant vandelay/);
    expect(() => enableNamespace(dir, "billing", { tenant: "acme" })).toThrow(
      /catalog\/billing\.yaml does not exist/,
    );
    expect(read("wrangler.toml")).toBe(toml);
  });
});
