import { describe, expect, it } from "vitest";
import { type CurrentPolicy, policyChange, policyOf } from "../../src/approvals/policy-version";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { computeToolVersion } from "../../src/catalog/tool-version";
import { DEFAULT_LIMITS, type TenantConfig, tenantConfigSchema } from "../../src/config/tenants";
import { catalog } from "../../src/tools";

const tenant = (overrides: Record<string, unknown> = {}) =>
  tenantConfigSchema().parse({
    namespaces: ["support", "shipping"],
    ceilings: DEFAULT_LIMITS,
    max_refund_cents: 100_000,
    ...overrides,
  });

const refund = catalog.find("support", "issue_refund") as ToolSpec;
const ticket = catalog.find("support", "create_internal_ticket") as ToolSpec;

async function policy(tool: ToolSpec, config: TenantConfig): Promise<CurrentPolicy> {
  return policyOf(tool, await computeToolVersion(tool), config);
}

describe("the policy an approval is asked under", () => {
  it("is the same for the same tool and an equal configuration, asked again or parsed anew", async () => {
    const config = tenant();
    const first = await policy(refund, config);
    expect(first.version).toMatch(/^pol_[0-9a-f]{16}$/);
    expect((await policy(refund, config)).version).toBe(first.version);
    expect((await policy(refund, tenant())).version).toBe(first.version);
    expect((await policy(ticket, config)).version).not.toBe(first.version);
  });

  it("changes with the tenant's rules for the tool, naming them, and with nothing else of its configuration", async () => {
    const before = await policy(refund, tenant());
    const related = [
      { max_refund_cents: 50_000 },
      { auto_approve_refund_cents: 500 },
      { owns: { order_id: "^A" } },
      { tainted_runs: { destructive: "refuse" } },
      { value_caps: { USD: { per_day: 10_000 } } },
      { approvers: { support: { issue_refund: { two_person_above: 20_000 } } } },
      { repeat_effects: { support: ["issue_refund"] } },
    ];
    for (const overrides of related) {
      const after = await policy(refund, tenant(overrides));
      expect(after.version, JSON.stringify(overrides)).not.toBe(before.version);
      expect(policyChange("issue_refund", before.binding, after)).toMatch(
        /^this tenant's rules for issue_refund changed since it was requested \(.+\)$/,
      );
    }
    expect(
      policyChange("issue_refund", before.binding, await policy(refund, tenant({ max_refund_cents: 1 }))),
    ).toBe("this tenant's rules for issue_refund changed since it was requested (max_refund_cents)");
    const unrelated = [
      { namespaces: ["support", "shipping", "helpdesk"] },
      { max_open_approvals: 5 },
      { repeat_threshold: 4 },
      { approvers: { support: { send_customer_email: { two_person_above: 1 } } } },
      { value_caps: { EUR: { per_day: 10_000 } } },
      { settings: { shipping: { max_parcels: 3 } } },
      { tainted_runs: { write: "refuse" } },
    ];
    for (const overrides of unrelated) {
      expect((await policy(refund, tenant(overrides))).version, JSON.stringify(overrides)).toBe(
        before.version,
      );
    }
  });

  it("changes with the tool's contract, naming the part, and says so when the tool is gone", async () => {
    const config = tenant();
    const before = await policy(refund, config);
    const described = {
      ...refund,
      description: { ...refund.description, does: "Refunds an order's payment." },
    };
    const after = await policy(described, config);
    expect(after.version).not.toBe(before.version);
    expect(policyChange("issue_refund", before.binding, after)).toBe(
      "the tool issue_refund changed since it was requested (its description)",
    );
    expect(policyChange("issue_refund", before.binding, null)).toBe(
      "the tool issue_refund is no longer offered to this run",
    );
    expect(policyChange("issue_refund", null, after)).toBe("the policy changed since it was requested");
  });
});
