/**
 * How many cases a fast-check property runs, and from which seed.
 *
 * CI runs each property's own share, which its test names: a fixed seed and a bounded count, so every
 * CI run checks the same cases and a failure there replays as it is. `npm run soak -- --only
 * properties` (scripts/soak.mjs) sets SOAK_FACTOR and SOAK_SEED: every property then runs SOAK_FACTOR
 * times its share from the soak's seed, cases CI never reaches. The model-based test has a plan of its
 * own (test/workerd/exactly-once.model.test.ts).
 */
export interface PropertyPlan {
  seed: number;
  numRuns: number;
}

/** A property's CI share, and at most how many cases a soak may give it. */
export interface PropertyShare extends PropertyPlan {
  /**
   * For a property whose every case constructs new Durable Objects: the test harness slowed with
   * each object it constructs (cloudflare/workers-sdk#15092, fixed for this suite by
   * test/pool-prototype-fix.ts), so past some count the cases stopped testing the product and only
   * waited on the harness.
   */
  soakAtMost?: number;
}

/** What a soak sets: in Node, `process.env`; in workerd, the Worker's env (vitest.config.ts). */
export interface SoakSettings {
  SOAK_FACTOR?: string | undefined;
  SOAK_SEED?: string | undefined;
}

/** A whole number above zero, or null for anything else (unset, empty, a fraction, a word). */
function positive(value: string | undefined): number | null {
  const parsed = Number(value);
  return value !== undefined && value !== "" && Number.isSafeInteger(parsed) && parsed > 0 ? parsed : null;
}

/**
 * How many times its CI share each property runs: SOAK_FACTOR, or null outside a soak. vitest.config.ts
 * scales its time limits by the same reading.
 */
export function soakFactor(settings: SoakSettings): number | null {
  return positive(settings.SOAK_FACTOR);
}

/**
 * The plans of one test file: `plan(share)` is the share itself in CI, and under a soak the share's
 * count times SOAK_FACTOR from SOAK_SEED (a fresh seed when that is unset; fast-check names the seed
 * of any failure either way).
 *
 * @example
 * const plan = propertyPlans(process.env);
 * fc.assert(property, plan({ seed: 20261202, numRuns: 300 }));
 */
export function propertyPlans(settings: SoakSettings): (share: PropertyShare) => PropertyPlan {
  const factor = soakFactor(settings);
  if (factor === null) return ({ seed, numRuns }) => ({ seed, numRuns });
  const seed = positive(settings.SOAK_SEED) ?? (Date.now() % 2_147_483_647 || 1);
  return ({ numRuns, soakAtMost }) => ({
    seed,
    numRuns: Math.max(numRuns, Math.min(numRuns * factor, soakAtMost ?? Number.POSITIVE_INFINITY)),
  });
}
