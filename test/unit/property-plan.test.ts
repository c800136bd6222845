import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { propertyPlans } from "../property-plan";

const share = { seed: 2_026_120_401, numRuns: 30 };

describe("a property's plan", () => {
  it("is its CI share, seed and count, when no soak is set", () => {
    expect(propertyPlans({})(share)).toEqual(share);
    expect(propertyPlans({ SOAK_FACTOR: "", SOAK_SEED: "" })(share)).toEqual(share);
    // A seed alone is the model-based soak's replay, not a soak of the properties.
    expect(propertyPlans({ SOAK_SEED: "77" })(share)).toEqual(share);
  });

  it("runs SOAK_FACTOR times its share from the soak's seed under a soak", () => {
    expect(propertyPlans({ SOAK_FACTOR: "20", SOAK_SEED: "77" })(share)).toEqual({ seed: 77, numRuns: 600 });
  });

  it("gives every property of a soak one seed, fresh when the soak names none", () => {
    const plan = propertyPlans({ SOAK_FACTOR: "2" });
    const first = plan(share);
    const second = plan({ seed: 1, numRuns: 5 });
    expect(first.seed).toBe(second.seed);
    expect(first.seed).not.toBe(share.seed);
    expect(Number.isSafeInteger(first.seed) && first.seed > 0).toBe(true);
    expect([first.numRuns, second.numRuns]).toEqual([60, 10]);
  });

  it("gives a property no more soak cases than it allows, and never fewer than its CI share", () => {
    const plan = propertyPlans({ SOAK_FACTOR: "20", SOAK_SEED: "77" });
    expect(plan({ ...share, soakAtMost: 150 })).toEqual({ seed: 77, numRuns: 150 });
    expect(plan({ ...share, soakAtMost: 10 })).toEqual({ seed: 77, numRuns: 30 });
    expect(propertyPlans({})({ ...share, soakAtMost: 10 })).toEqual(share);
  });

  it("keeps the CI share when SOAK_FACTOR is not a whole number above zero", () => {
    for (const factor of ["0", "-3", "2.5", "ten", "1e400"]) {
      expect(propertyPlans({ SOAK_FACTOR: factor, SOAK_SEED: "77" })(share)).toEqual(share);
    }
  });
});

describe("the properties of the test suite", () => {
  it("are each planned, so CI's share is seeded and a soak reaches them", () => {
    const testDir = join(import.meta.dirname, "..");
    const unplanned = readdirSync(testDir, { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".test.ts"))
      // The model-based test plans its sequences itself, seeded in CI and soaked in chunks.
      .filter((file) => file !== join("workerd", "exactly-once.model.test.ts"))
      .flatMap((file) => {
        const text = readFileSync(join(testDir, file), "utf8");
        const asserts = text.match(/\bfc\.assert\(/g)?.length ?? 0;
        const planned = text.match(/\bplan\(\{ seed: /g)?.length ?? 0;
        return asserts > planned ? [`${file}: ${asserts} fc.assert, ${planned} plan({ seed, numRuns })`] : [];
      });
    expect(unplanned).toEqual([]);
  });
});
