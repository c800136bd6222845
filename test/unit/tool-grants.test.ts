import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { profileToolsProblems } from "../../src/catalog/profile-tools";
import { rankTools } from "../../src/catalog/search";
import { findGranted, resolveSubset, toolRef } from "../../src/catalog/subset";
import { DEFAULT_LIMITS, tenantConfigSchema } from "../../src/config/tenants";
import { grantedTools, MAX_DISCOVERY_CALLS, runTools } from "../../src/machine/grants";
import { type CallScope, prepareCall } from "../../src/machine/prepare";
import { catalog, discoveryTools } from "../../src/tools";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

/**
 * The grants rule, pure: whatever a run is opened with, adds, or asks find_tools and use_tool for,
 * the tool it sees or calls is one its tenant grants.
 */

const ALL_NAMESPACES = catalog.namespaces();
const EVERY_NAME = [...new Set(catalog.all().map((tool) => tool.name)), "find_tools", "use_tool"];
const EVERY_REF = catalog.all().map(toolRef);

/** A name a caller might write: any tool's, qualified or not, or anything else. */
const written = fc.oneof(
  fc.constantFrom(...EVERY_NAME),
  fc.constantFrom(...EVERY_REF),
  fc.string({ maxLength: 20 }),
  fc.constantFrom("support.", ".lookup_order", "nowhere.lookup_order", "shipping.issue_refund"),
);
const namespaces = fc.subarray(ALL_NAMESPACES, { minLength: 1 });

function tenantOf(granted: string[]) {
  return tenantConfigSchema().parse({
    namespaces: granted,
    ceilings: DEFAULT_LIMITS,
    max_refund_cents: 100_000,
  });
}

describe("the grants rule", () => {
  it("never resolves a subset, an add or a use_tool name to a tool outside the tenant's namespaces", () => {
    fc.assert(
      fc.property(namespaces, fc.array(written, { maxLength: 8 }), (tenantNamespaces, asked) => {
        const granted = grantedTools(catalog, tenantNamespaces, tenantNamespaces);
        const subset = resolveSubset(granted, asked, "tools");
        if (subset.ok) {
          for (const ref of subset.refs) expect(tenantNamespaces).toContain(ref.split(".")[0]);
        } else {
          for (const problem of subset.problems) expect(problem.field).toMatch(/^tools\[\d+\]$/);
        }
        for (const name of asked) {
          const found = findGranted(granted, name);
          if (found.ok) expect(tenantNamespaces).toContain(found.tool.namespace);
        }
      }),
      plan({ seed: 2_026_120_415, numRuns: 100 }),
    );
  });

  it("lets a call, direct or through use_tool, reach only the run's tools or its tenant's grants", () => {
    fc.assert(
      fc.property(
        namespaces,
        fc.array(written, { maxLength: 4 }),
        fc.constantFrom(...EVERY_NAME),
        written,
        fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
        (tenantNamespaces, asked, direct, inner, args) => {
          const granted = grantedTools(catalog, tenantNamespaces, tenantNamespaces);
          const subset = resolveSubset(granted, asked, "tools");
          const [home = "support"] = tenantNamespaces;
          const set = { namespace: home, tools: subset.ok ? subset.refs : null, reach: tenantNamespaces };
          const scope: CallScope = {
            tools: runTools(catalog, set, discoveryTools(home)),
            granted,
            discovery_left: MAX_DISCOVERY_CALLS,
          };
          const visible = new Set([...scope.tools, ...granted]);
          const tenant = tenantOf(tenantNamespaces);
          for (const request of [
            { ok: true as const, tool: direct, args },
            { ok: true as const, tool: "use_tool", args: { name: inner, arguments: args } },
          ]) {
            const prepared = prepareCall(catalog, scope, request, { tenantId: "acme", tenant });
            if (prepared.tool) expect(visible.has(prepared.tool)).toBe(true);
            if (prepared.tool && prepared.tool.builtin === null) {
              expect(tenantNamespaces).toContain(prepared.tool.namespace);
            }
          }
        },
      ),
      plan({ seed: 2_026_120_402, numRuns: 300 }),
    );
  });

  it("refuses find_tools and use_tool once the run's discovery calls are spent, before resolving anything", () => {
    const tenant = tenantOf(["support", "shipping"]);
    const granted = grantedTools(catalog, ["support", "shipping"], tenant.namespaces);
    const scope: CallScope = {
      tools: runTools(
        catalog,
        { namespace: "support", tools: ["support.lookup_order"] },
        discoveryTools("support"),
      ),
      granted,
      discovery_left: 0,
    };
    const used = prepareCall(
      catalog,
      scope,
      { ok: true, tool: "use_tool", args: { name: "lookup_shipment", arguments: { order_id: "A1" } } },
      { tenantId: "acme", tenant },
    );
    expect(used.refusal?.code).toBe("budget_exhausted");
    expect(used.args).toBeNull();
  });
});

describe("find_tools' ranking", () => {
  it("puts the tool whose name and description match the intent first, and finds nothing for noise", () => {
    const granted = grantedTools(catalog, ALL_NAMESPACES, ALL_NAMESPACES);
    expect(rankTools(granted, "refund money to the customer", 3)[0]?.name).toBe("issue_refund");
    expect(rankTools(granted, "where is my parcel shipment", 3).map((tool) => tool.name)).toContain(
      "lookup_shipment",
    );
    expect(rankTools(granted, "zzqx", 3)).toEqual([]);
    expect(rankTools(granted, "refund", 2)).toHaveLength(2);
  });
});

describe("an agent profile's tools", () => {
  const toolsOf = (namespace: string) => catalog.tools(namespace).map((tool) => tool.name);
  const profiles = (tools: string[]) => ({
    namespaces: ["support"],
    agent_profiles: { triage: { namespace: "support", limits: {}, tools } },
  });

  it("pass when every one is granted", () => {
    expect(profileToolsProblems("acme", profiles(["lookup_order", "support.issue_refund"]), toolsOf)).toEqual(
      [],
    );
  });

  it("are refused, located, when one is unknown or outside the tenant's namespaces", () => {
    expect(profileToolsProblems("acme", profiles(["lookup_order", "fly_rocket"]), toolsOf)).toEqual([
      expect.stringMatching(
        /^acme\.agent_profiles\.triage\.tools\[1\]: "fly_rocket" is not a tool this tenant grants/,
      ),
    ]);
    expect(profileToolsProblems("acme", profiles(["shipping.lookup_shipment"]), toolsOf)).toEqual([
      expect.stringContaining("acme.agent_profiles.triage.tools[0]"),
    ]);
  });

  it("are refused by the tenant schema when malformed", () => {
    const parsed = tenantConfigSchema().safeParse({
      namespaces: ["support"],
      ceilings: DEFAULT_LIMITS,
      max_refund_cents: 1,
      agent_profiles: { triage: { namespace: "support", tools: ["Not A Tool"] } },
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(["agent_profiles", "triage", "tools", 0]);
  });
});
