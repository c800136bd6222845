import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { checkCatalog } from "../../scripts/tools/catalog-check";
import {
  productionDeploymentProblems,
  runProductionCheck,
  unverifiedJwtWarnings,
} from "../../scripts/tools/production-check";
import {
  kvNamespaceIdProblem,
  metricsAccountProblem,
  PRODUCTION_VARS_SITE,
  placeholderUrlReason,
  placeholderUrlVars,
  productionPlaceholderProblems,
} from "../../src/config/placeholders";

const repository = fileURLToPath(new URL("../..", import.meta.url));

describe("an upstream URL a production deploy must not ship", () => {
  it.each([
    ["https://example.com", "example.com is reserved for documentation"],
    ["https://orders.api.example.com/v1", "example.com is reserved for documentation"],
    ["https://example.net", "example.net is reserved for documentation"],
    ["https://api.example.net:8443/", "example.net is reserved for documentation"],
    ["https://example.org", "example.org is reserved for documentation"],
    ["http://crm.EXAMPLE.ORG.", "example.org is reserved for documentation"],
    ["https://orders.invalid", "the top-level name .invalid never resolves"],
    ["https://invalid", "the top-level name .invalid never resolves"],
    ["https://orders.test", "the top-level name .test never resolves"],
    ["https://orders.example", "the top-level name .example never resolves"],
    ["http://localhost:8787", "this machine (localhost)"],
    ["http://api.localhost", "this machine (api.localhost)"],
    ["http://127.0.0.1:8795", "this machine (127.0.0.1)"],
    ["http://127.1.2.3", "this machine (127.1.2.3)"],
    ["http://[::1]:8080", "this machine ([::1])"],
    ["http://0.0.0.0", "this machine (0.0.0.0)"],
    ["https://", "not a URL"],
  ])("refuses %s: %s", (url, reason) => {
    expect(placeholderUrlReason(url)).toContain(reason);
  });

  it.each([
    "https://orders.acme-corp.com",
    "https://api.stripe.com/v1",
    "https://notexample.com",
    "https://example.com.acme.io",
    "https://myexample.org",
    "https://helpdesk.internal",
    "https://128.0.0.1",
    "https://10.0.0.7:8443",
    "https://localhost-api.acme.com",
  ])("lets the real address %s through", (url) => {
    expect(placeholderUrlReason(url)).toBeNull();
  });

  it("names each var, its value, why, and where to set it; leaves vars that are no URL alone", () => {
    expect(
      placeholderUrlVars(
        {
          ORDERS_API: "https://orders.api.example.com",
          CRM_API: "https://crm.acme-corp.com",
          EMAIL_API: "http://127.0.0.1:8790",
          ENVIRONMENT: "production",
          TENANTS: { acme: {} },
        },
        PRODUCTION_VARS_SITE,
      ),
    ).toEqual([
      'ORDERS_API is "https://orders.api.example.com", a placeholder: example.com is reserved for documentation; set ORDERS_API in [env.production.vars] in wrangler.toml to the https URL of the real API',
      'EMAIL_API is "http://127.0.0.1:8790", this machine (127.0.0.1), which no deployed Worker reaches; set EMAIL_API in [env.production.vars] in wrangler.toml to the https URL of the real API',
    ]);
  });

  it("reads only the upstream vars it is given, so a secret's value is never quoted", () => {
    const env = {
      ORDERS_API: "https://orders.example.org",
      SOME_SECRET: "https://user:secret@example.com",
    };
    const problems = productionPlaceholderProblems(env, ["ORDERS_API", "ORDERS_API", "PAYMENTS_API"]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^ORDERS_API is "https:\/\/orders\.example\.org"/);
  });
});

describe("ids a production deploy must not ship", () => {
  it("accepts an empty METRICS_ACCOUNT_ID or an account id, refuses anything else by name", () => {
    expect(metricsAccountProblem(undefined, PRODUCTION_VARS_SITE)).toBeNull();
    expect(metricsAccountProblem("", PRODUCTION_VARS_SITE)).toBeNull();
    expect(metricsAccountProblem("0123456789abcdef0123456789abcdef", PRODUCTION_VARS_SITE)).toBeNull();
    expect(metricsAccountProblem("REPLACE_WITH_ACCOUNT_ID", PRODUCTION_VARS_SITE)).toBe(
      'METRICS_ACCOUNT_ID is "REPLACE_WITH_ACCOUNT_ID", not a Cloudflare account id (32 lowercase hex characters); set METRICS_ACCOUNT_ID in [env.production.vars] in wrangler.toml to the Account ID the dashboard shows, or to "" to leave metrics unread',
    );
  });

  it("refuses a KV namespace id that is the placeholder or no id, saying how to create one", () => {
    expect(
      kvNamespaceIdProblem("OAUTH_KV", "0123456789abcdef0123456789abcdef", "production", "x"),
    ).toBeNull();
    expect(kvNamespaceIdProblem("OAUTH_KV", "REPLACE_WITH_OAUTH_KV_NAMESPACE_ID", "production", "x")).toBe(
      'KV namespace OAUTH_KV has id "REPLACE_WITH_OAUTH_KV_NAMESPACE_ID", a placeholder, not a namespace id (32 lowercase hex characters); create it with `npx wrangler kv namespace create OAUTH_KV --env production` and put the id it prints in x',
    );
    expect(kvNamespaceIdProblem("OAUTH_KV", "edge-tool-proxy-oauth-local", "production", "x")).toContain(
      '"edge-tool-proxy-oauth-local", not a namespace id',
    );
  });
});

/** A project folder with this wrangler.toml and catalog file. */
function project(wrangler: string, catalog: string): string {
  const root = mkdtempSync(join(tmpdir(), "production-check-"));
  writeFileSync(join(root, "wrangler.toml"), wrangler);
  mkdirSync(join(root, "catalog"));
  writeFileSync(join(root, "catalog", "helpdesk.yaml"), catalog);
  return root;
}

const WRANGLER = (vars: string, kvId: string) => `name = "proxy"
main = "src/index.ts"
compatibility_date = "2026-04-20"

[env.sandbox.vars]
ENVIRONMENT = "sandbox"
ORDERS_API = "http://127.0.0.1:8790"

[env.production.vars]
ENVIRONMENT = "production"
${vars}

[[env.production.kv_namespaces]]
binding = "OAUTH_KV"
id = "${kvId}"
`;

describe("npm run tools -- check --env production", () => {
  it("names every placeholder the repository ships for production, where it is written", () => {
    const problems = productionDeploymentProblems(repository);
    expect(problems.map((problem) => problem.split(": ")[0])).toEqual([
      "wrangler.toml",
      "wrangler.toml",
      "wrangler.toml",
      "wrangler.toml",
      "wrangler.toml",
      "wrangler.toml",
      "catalog/helpdesk.yaml",
    ]);
    for (const name of ["ORDERS_API", "PAYMENTS_API", "CRM_API", "EMAIL_API", "SHIPMENTS_API"]) {
      expect(problems).toContainEqual(
        expect.stringMatching(
          new RegExp(`^wrangler\\.toml: env\\.production\\.vars\\.${name}: ${name} is "https://`),
        ),
      );
    }
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^wrangler\.toml: env\.production\.kv_namespaces\.OAUTH_KV\.id: .*REPLACE_WITH_OAUTH_KV_NAMESPACE_ID/,
      ),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^catalog\/helpdesk\.yaml: upstreams\.HELPDESK_MCP\.base\.production: .*"https:\/\/helpdesk\.example\.com"/,
      ),
    );
  });

  it("fails the command on the repository as shipped, printing each placeholder and not to deploy", () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      expect(runProductionCheck(repository)).toBe(false);
      const printed = errors.mock.calls.map(([line]) => String(line));
      expect(printed.slice(0, -1)).toEqual(productionDeploymentProblems(repository));
      expect(printed.at(-1)).toBe("\n7 production placeholders: do not deploy until each is set.");
    } finally {
      errors.mockRestore();
    }
  });

  it("warns of each upstream sent the proxy's JWT that no certification has shown verifying it", () => {
    const { standings } = checkCatalog(repository);
    // The shipped HTTP upstreams' certifications probed their credential check; the MCP server's cannot.
    expect(unverifiedJwtWarnings(standings)).toEqual([
      "warning: helpdesk.HELPDESK_MCP is sent the proxy's JWT, but no certification has shown it refusing a request without a valid one: run npm run tools -- certify helpdesk",
    ]);
  });

  it("passes a production with real URLs and ids, while the sandbox keeps its loopback upstream", () => {
    const root = project(
      WRANGLER(
        'ORDERS_API = "https://orders.acme-corp.com"\nMETRICS_ACCOUNT_ID = "0123456789abcdef0123456789abcdef"',
        "fedcba9876543210fedcba9876543210",
      ),
      'upstreams:\n  HELPDESK_MCP:\n    kind: mcp\n    base: { production: "https://helpdesk.acme-corp.com" }\n',
    );
    expect(productionDeploymentProblems(root)).toEqual([]);
    const logs = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      expect(runProductionCheck(root)).toBe(true);
    } finally {
      logs.mockRestore();
    }
  });

  it("refuses loopback URLs, a malformed account id and a catalog base on .invalid", () => {
    const root = project(
      WRANGLER(
        'ORDERS_API = "http://localhost:8790"\nCRM_API = "https://crm.invalid"\nMETRICS_ACCOUNT_ID = "my-account"',
        "fedcba9876543210fedcba9876543210",
      ),
      'upstreams:\n  HELPDESK_MCP:\n    kind: mcp\n    base: { sandbox: "http://127.0.0.1:9000", production: "https://helpdesk.invalid" }\n',
    );
    expect(productionDeploymentProblems(root)).toEqual([
      expect.stringMatching(
        /^wrangler\.toml: env\.production\.vars\.ORDERS_API: ORDERS_API is "http:\/\/localhost:8790", this machine/,
      ),
      expect.stringMatching(
        /^wrangler\.toml: env\.production\.vars\.CRM_API: CRM_API is "https:\/\/crm\.invalid", a placeholder/,
      ),
      expect.stringMatching(
        /^wrangler\.toml: env\.production\.vars\.METRICS_ACCOUNT_ID: METRICS_ACCOUNT_ID is "my-account"/,
      ),
      expect.stringMatching(
        /^catalog\/helpdesk\.yaml: upstreams\.HELPDESK_MCP\.base\.production: .*"https:\/\/helpdesk\.invalid"/,
      ),
    ]);
  });

  it("refuses a production base or URL var on a private network, a link, an obfuscated address or the proxy itself", () => {
    const root = project(
      WRANGLER(
        'ORDERS_API = "https://10.0.0.7:8443"\nCRM_API = "https://crm.acme-corp.com"',
        "fedcba9876543210fedcba9876543210",
      ),
      'upstreams:\n  HELPDESK_MCP:\n    kind: mcp\n    base: { sandbox: "http://127.0.0.1:9000", production: "https://169.254.169.254/latest" }\n  OTHER_MCP:\n    kind: mcp\n    base: { production: "https://2130706433" }\n  SELF_MCP:\n    kind: mcp\n    base: { production: "https://proxy-sandbox.acme.workers.dev" }\n',
    );
    // The sandbox Worker is wrangler's default name for the environment: proxy-sandbox.
    expect(productionDeploymentProblems(root)).toEqual([
      expect.stringMatching(
        /^wrangler\.toml: env\.production\.vars\.ORDERS_API: ORDERS_API is "https:\/\/10\.0\.0\.7:8443", an address of a private network/,
      ),
      expect.stringMatching(
        /^catalog\/helpdesk\.yaml: upstreams\.HELPDESK_MCP\.base\.production: .*"https:\/\/169\.254\.169\.254\/latest", a link-local address/,
      ),
      expect.stringMatching(
        /^catalog\/helpdesk\.yaml: upstreams\.OTHER_MCP\.base\.production: .*"https:\/\/2130706433", this machine \(127\.0\.0\.1\)/,
      ),
      expect.stringMatching(
        /^catalog\/helpdesk\.yaml: upstreams\.SELF_MCP\.base\.production: .*"https:\/\/proxy-sandbox\.acme\.workers\.dev", this proxy's own address/,
      ),
    ]);
  });
});
