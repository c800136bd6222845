import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  approversProblems,
  type DeployedTenant,
  ENVIRONMENTS,
  profileToolsOfDeployment,
  readTenants,
  repeatEffectsProblems,
} from "../../scripts/tools/tenants-check";
import type { SideEffect } from "../../src/catalog/define-tool";
import { DEFAULT_LIMITS, parseTenants, type TenantConfig, tenantsSchema } from "../../src/config/tenants";
import { compiledTenants } from "../../src/generated/tenants";
import { catalog } from "../../src/tools";

const fixture = fileURLToPath(new URL("./fixtures/tenants", import.meta.url));
const TENANTS = "wrangler.toml: env.sandbox.vars.TENANTS";

describe("TENANTS in wrangler.toml, checked by npm run tools -- check", () => {
  const { tenants, problems } = readTenants(fixture);

  it("reports each bad value cap, shard count and approval SLA where it is written, with what was given", () => {
    expect(problems).toEqual([
      `${TENANTS}.globex.value_caps.USD.per_run: must be an integer ≥ 0 (got 1.5)`,
      `${TENANTS}.globex.value_caps.USD.per_day: must be an integer ≥ 0 (got -5)`,
      `${TENANTS}.globex.value_caps.usd: "usd" is not a currency: a three-letter ISO 4217 code, such as USD`,
      `${TENANTS}.globex.effect_shards: must be an integer from 1 to 64 (got 0)`,
      `${TENANTS}.globex.approval_sla_s: must be a whole number of seconds from 1 to 86400 (got -60); an approval's SLA cannot be negative or zero`,
      expect.stringContaining(".initech.alerts."),
      expect.stringContaining(".initech.alerts."),
      expect.stringContaining(".initech.alerts."),
    ]);
  });

  it("reports an alert on an unknown rate, a threshold out of its range and a window under a minute", () => {
    const { problems: alerts } = readTenants(fixture);
    expect(alerts.filter((problem) => problem.includes(".initech."))).toEqual([
      `${TENANTS}.initech.alerts.slow_calls: "slow_calls" is not a rate alerts can watch: task_success, invalid_calls, human_takeover, duplicates_prevented, approvals_overdue`,
      `${TENANTS}.initech.alerts.invalid_calls.threshold: must be a rate from 0 to 1 (got 1.5)`,
      `${TENANTS}.initech.alerts.human_takeover.window_minutes: must be a whole number of minutes from 1 to 11520 (got 0)`,
    ]);
  });

  it("still reads the tenants that parse, in every environment", () => {
    expect(tenants.map(({ environment, id }) => `${environment}/${id}`)).toEqual([
      "sandbox/acme",
      "production/acme",
    ]);
    expect(tenants[0]?.tenant.effect_shards).toBe(4);
    expect(tenants[0]?.tenant.value_caps).toEqual({});
  });

  it("refuses a repeatable tool that is not a write of the tenant's namespace, naming the ones there are", () => {
    const helpdesk = new Map<string, SideEffect>([
      ["get_ticket_notes", "read"],
      ["add_ticket_note", "write"],
      ["purge_conversation", "destructive"],
    ]);
    const catalog = new Map([
      ["helpdesk", helpdesk],
      ["shipping", new Map<string, SideEffect>([["reroute_shipment", "write"]])],
    ]);
    const offered = "(it has add_ticket_note, purge_conversation)";
    expect(repeatEffectsProblems(tenants, catalog)).toEqual([
      `${TENANTS}.acme.repeat_effects.helpdesk[1]: "get_ticket_notes" is a read tool; only a write or destructive tool's effect can repeat ${offered}`,
      `${TENANTS}.acme.repeat_effects.helpdesk[2]: "add_ticket_comment" is not a tool of helpdesk; name a write or destructive tool ${offered}`,
      `${TENANTS}.acme.repeat_effects.shipping: "shipping" is not one of the tenant's namespaces (support, helpdesk)`,
    ]);
  });

  it("refuses an agent profile's tool that is unknown or outside the tenant's namespaces, where it is written", () => {
    const catalog = new Map([
      ["support", new Map<string, SideEffect>([["lookup_order", "read"]])],
      ["helpdesk", new Map<string, SideEffect>([["purge_conversation", "destructive"]])],
      ["shipping", new Map<string, SideEffect>([["lookup_shipment", "read"]])],
    ]);
    expect(profileToolsOfDeployment(tenants, catalog)).toEqual([
      expect.stringMatching(
        /^wrangler\.toml: env\.sandbox\.vars\.TENANTS\.acme\.agent_profiles\.triage\.tools\[1\]: "shipping\.lookup_shipment" is not a tool this tenant grants/,
      ),
      expect.stringMatching(
        /\.agent_profiles\.triage\.tools\[3\]: "fly_rocket" is not a tool this tenant grants/,
      ),
    ]);
  });

  it("passes the shipped wrangler.toml", () => {
    const shipped = readTenants(fileURLToPath(new URL("../..", import.meta.url)));
    expect(shipped.problems).toEqual([]);
    const hooli = shipped.tenants.find(({ id }) => id === "hooli")?.tenant;
    expect(hooli?.effect_shards).toBe(8);
    expect(hooli?.value_caps).toEqual({ USD: { per_run: 4_000, per_day: 50_000, per_subject_day: 2_500 } });
    expect(hooli?.alerts).toEqual({ invalid_calls: { threshold: 0.5, window_minutes: 60, min_sample: 20 } });
  });
});

describe("parseTenants, as the Worker reads TENANTS", () => {
  const tenant = {
    namespaces: ["support"],
    ceilings: { max_calls: 5, max_writes: 1, max_destructive: 1, deadline_s: 60 },
    max_refund_cents: 100,
  };

  it("names every problem with its path", () => {
    expect(() =>
      parseTenants({ t: { ...tenant, value_caps: { USD: { per_day: -5 } }, effect_shards: 65 } }),
    ).toThrow(
      'TENANTS is invalid at "t.value_caps.USD.per_day": must be an integer ≥ 0 (got -5); TENANTS is invalid at "t.effect_shards": must be an integer from 1 to 64 (got 65)',
    );
  });

  it("refuses a bad alert where the Worker reads it, so nothing starts with it", () => {
    expect(() =>
      parseTenants({ t: { ...tenant, alerts: { invalid_calls: { threshold: -0.1, window_minutes: -5 } } } }),
    ).toThrow(
      'TENANTS is invalid at "t.alerts.invalid_calls.threshold": must be a rate from 0 to 1 (got -0.1); TENANTS is invalid at "t.alerts.invalid_calls.window_minutes": must be a whole number of minutes from 1 to 11520 (got -5)',
    );
  });

  it("refuses a negative approval SLA and a role that is no role name, where the config loads", () => {
    expect(() =>
      parseTenants({ t: { ...tenant, approval_sla_s: -1, escalation_role: "Team Leads!" } }),
    ).toThrow(
      'TENANTS is invalid at "t.approval_sla_s": must be a whole number of seconds from 1 to 86400 (got -1); an approval\'s SLA cannot be negative or zero; TENANTS is invalid at "t.escalation_role": must be a role name: lowercase letters, digits, _ and -, such as support_lead',
    );
  });

  it("keeps a tenant's receipts 400 days unless it says otherwise, and refuses a retention that is no number of days", () => {
    expect(parseTenants({ t: tenant }).t?.audit).toEqual({ retention_days: 400, push: false });
    expect(parseTenants({ t: { ...tenant, audit: { retention_days: 2555, push: true } } }).t?.audit).toEqual({
      retention_days: 2555,
      push: true,
    });
    expect(() => parseTenants({ t: { ...tenant, audit: { retention_days: 0, keep: true } } })).toThrow(
      'TENANTS is invalid at "t.audit.retention_days": must be a whole number of days from 1 to 3650 (got 0); TENANTS is invalid at "t.audit": Unrecognized key: "keep"',
    );
  });

  it("says when TENANTS is not JSON at all", () => {
    expect(() => parseTenants("{acme:")).toThrow(/^TENANTS is not JSON: /);
  });
});

describe("parseTenants given the TENANTS a deploy ships, compiled by npm run tools -- compile", () => {
  const { tables } = readTenants(fileURLToPath(new URL("../..", import.meta.url)));
  /** The table in another key order and as a JSON string: the same table to the Worker. */
  const reordered = (table: unknown) =>
    JSON.stringify(
      Object.fromEntries(
        Object.entries(table as Record<string, Record<string, unknown>>)
          .reverse()
          .map(([id, tenant]) => [id, Object.fromEntries(Object.entries(tenant).reverse())]),
      ),
    );

  it.each(ENVIRONMENTS)(
    "takes the %s table as compile parsed it: what the schema makes of it",
    (environment) => {
      const table = tables[environment];
      const compiled = compiledTenants.find((entry) => entry.environment === environment);
      expect(compiled?.tenants).toEqual(tenantsSchema().parse(table));
      // The compiled value itself, not a second parse: whatever the form it comes in.
      expect(parseTenants(table)).toBe(compiled?.tenants);
      expect(parseTenants(structuredClone(table))).toBe(compiled?.tenants);
      expect(parseTenants(reordered(table))).toBe(compiled?.tenants);
    },
  );

  it("parses a table changed since it was compiled, defaults and refusals included", () => {
    const table = structuredClone(tables.sandbox) as Record<string, Record<string, unknown>>;
    const compiled = parseTenants(tables.sandbox);
    table.acme = { ...table.acme, repeat_threshold: 7 };
    const edited = parseTenants(table);
    expect(edited).not.toBe(compiled);
    expect(edited.acme?.repeat_threshold).toBe(7);
    expect(edited.acme?.rate_limits).toEqual(compiled.acme?.rate_limits);
    expect(edited.globex).toEqual(compiled.globex);
    table.acme = { ...table.acme, effect_shards: 0 };
    expect(() => parseTenants(table)).toThrow(
      'TENANTS is invalid at "acme.effect_shards": must be an integer from 1 to 64 (got 0)',
    );
  });

  it("parses, and refuses, a value canonical JSON cannot write", () => {
    expect(() => parseTenants({ t: { namespaces: ["support"], max_refund_cents: Number.NaN } })).toThrow(
      /TENANTS is invalid at "t\.ceilings"/,
    );
  });
});

describe("who approves, checked by npm run tools -- check against the local OPERATOR_KEYS", () => {
  const repository = fileURLToPath(new URL("../..", import.meta.url));
  const acme = (approvers: unknown): DeployedTenant => ({
    environment: "sandbox",
    id: "acme",
    tenant: parseTenants({
      acme: { namespaces: ["support"], ceilings: DEFAULT_LIMITS, max_refund_cents: 50_000, approvers },
    }).acme as TenantConfig,
  });
  /** A repository root whose .dev.vars gives acme these operators. */
  const rootWith = (operators: unknown[]) => {
    const dir = mkdtempSync(join(tmpdir(), "approvers-"));
    writeFileSync(join(dir, ".dev.vars"), `OPERATOR_KEYS=${JSON.stringify({ acme: operators })}\n`);
    return dir;
  };
  const hash = (n: number) => String(n).repeat(64).slice(0, 64);

  it("passes the shipped wrangler.toml and .dev.vars.example", () => {
    expect(approversProblems(repository, readTenants(repository).tenants, catalog.all())).toEqual([]);
  });

  it("refuses a tool naming a role no operator holds, naming both, and says which file it read", () => {
    const root = rootWith([{ name: "Dana Reyes", sha256: hash(1), roles: ["finance_lead"] }]);
    expect(approversProblems(root, [acme({})], catalog.all())).toEqual([
      '.dev.vars: tool support.issue_refund names the role "support_lead", which no operator of tenant acme holds (OPERATOR_KEYS.acme: roles held: finance_lead)',
    ]);
  });

  it("refuses an unknown role and a two-person rule one person cannot meet, where they are written", () => {
    const root = rootWith([
      { name: "Dana Reyes", sha256: hash(1), roles: ["support_lead", "finance_lead"] },
      { name: "Lee Park", sha256: hash(2), roles: ["support_lead"] },
    ]);
    const problems = approversProblems(
      root,
      [
        acme({
          support: { issue_refund: { rules: [{ above: 100, role: "finance" }], two_person_above: 1000 } },
        }),
      ],
      catalog.all(),
    );
    expect(problems).toEqual([
      `${TENANTS}.acme.approvers.support.issue_refund.rules[0].role: unknown role "finance": no operator of tenant acme holds it (roles held: support_lead, finance_lead)`,
      `${TENANTS}.acme.approvers.support.issue_refund.two_person_above: two different operators must approve above 1000 USD minor units, but of tenant acme's operators that hold the role "finance" there is none; add a second operator key with that role to OPERATOR_KEYS.acme or remove the rule`,
    ]);
  });

  it("refuses a negative threshold where it is written", () => {
    expect(() => acme({ support: { issue_refund: { two_person_above: -1 } } })).toThrow(
      'TENANTS is invalid at "acme.approvers.support.issue_refund.two_person_above": must be an amount: an integer ≥ 0 in the minor unit of the tool\'s value currency (got -1)',
    );
  });
});
