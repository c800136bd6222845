import { describe, expect, it } from "vitest";
import { policyVersion } from "../../src/approvals/policy-version";
import { DEFAULT_LIMITS, tenantConfigSchema } from "../../src/config/tenants";

const tenant = (maxRefundCents: number) =>
  tenantConfigSchema().parse({
    namespaces: ["support"],
    ceilings: DEFAULT_LIMITS,
    max_refund_cents: maxRefundCents,
  });

describe("the policy version an approval is asked under", () => {
  it("is the same for the same catalog and an equal configuration, asked again or parsed anew", async () => {
    const config = tenant(100_000);
    const first = await policyVersion("cat_1", config);
    expect(first).toMatch(/^pol_[0-9a-f]{16}$/);
    expect(await policyVersion("cat_1", config)).toBe(first);
    expect(await policyVersion("cat_1", tenant(100_000))).toBe(first);
  });

  it("changes with the catalog version and with the tenant's configuration, after either was asked", async () => {
    const config = tenant(100_000);
    const before = await policyVersion("cat_1", config);
    expect(await policyVersion("cat_2", config)).not.toBe(before);
    expect(await policyVersion("cat_1", tenant(50_000))).not.toBe(before);
    expect(await policyVersion("cat_1", config)).toBe(before);
  });
});
