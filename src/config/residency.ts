import * as z from "zod";
import { lazily } from "../core/lazily";

/** The jurisdictions Durable Objects can be restricted to (`DurableObjectNamespace.jurisdiction`). */
export const JURISDICTIONS = ["eu", "fedramp", "fedramp-high"] as const;
/** Cloudflare's location hints (`{ locationHint }` when an object is first reached). */
export const LOCATION_HINTS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me"] as const;

export type Jurisdiction = (typeof JURISDICTIONS)[number];
export type LocationHint = (typeof LOCATION_HINTS)[number];

/** The hints that lie inside each jurisdiction: a hint outside it could never be honoured. */
const HINTS_IN: Record<Jurisdiction, readonly LocationHint[]> = {
  eu: ["weur", "eeur"],
  fedramp: ["wnam", "enam"],
  "fedramp-high": ["wnam", "enam"],
};

/**
 * Where a tenant's objects live: its runs' ledgers and its tenant-wide objects (directory, effect
 * shards, cap pools, rate limiters, health counters). A jurisdiction is a guarantee (the objects
 * are created and stored only inside it); a location hint is a preference for where an object is
 * first created. Both absent: wherever Cloudflare places an object, as before.
 */
export const residencySchema = lazily(() =>
  z
    .strictObject({
      jurisdiction: z
        .enum(JURISDICTIONS, {
          error: (issue) =>
            `${JSON.stringify(issue.input)} is not a jurisdiction: one of ${JURISDICTIONS.join(", ")}`,
        })
        .optional(),
      location_hint: z
        .enum(LOCATION_HINTS, {
          error: (issue) =>
            `${JSON.stringify(issue.input)} is not a location hint: one of ${LOCATION_HINTS.join(", ")}`,
        })
        .optional(),
    })
    .superRefine((residency, ctx) => {
      const { jurisdiction, location_hint } = residency;
      if (!jurisdiction || !location_hint) return;
      const inside = HINTS_IN[jurisdiction];
      if (!inside.includes(location_hint)) {
        ctx.addIssue({
          code: "custom",
          path: ["location_hint"],
          message: `"${location_hint}" lies outside the jurisdiction "${jurisdiction}" (inside it: ${inside.join(", ")})`,
        });
      }
    })
    .prefault({}),
);
export type Residency = z.infer<ReturnType<typeof residencySchema>>;

/**
 * How the runtime honours a jurisdiction. `cloudflare` (the default, and the only one production
 * accepts): through `DurableObjectNamespace.jurisdiction(...)`. `simulated` (`RESIDENCY=simulated`
 * in .dev.vars, for workerd, which refuses `jurisdiction()` with "Jurisdiction restrictions are not
 * implemented in workerd"): the jurisdiction is written into the object's name instead
 * (`eu:<name>`), so a jurisdiction's objects are still distinct from everyone else's and a test can
 * see where each one went, though all live on this machine.
 */
export type ResidencyMode = "cloudflare" | "simulated";

export function parseResidencyMode(raw: unknown, environment: string): ResidencyMode {
  if (raw === undefined || raw === "" || raw === "cloudflare") return "cloudflare";
  if (raw !== "simulated") {
    throw new Error(`RESIDENCY must be "cloudflare" (or absent) or "simulated" (got ${JSON.stringify(raw)})`);
  }
  if (environment === "production") {
    throw new Error(
      `RESIDENCY=simulated is for the local runtime only: production places objects with Cloudflare's jurisdictions`,
    );
  }
  return "simulated";
}
