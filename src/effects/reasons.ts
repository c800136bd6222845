import type { CapLimit, EarlierEffect } from "../wire/effects";
import type { EffectClaim } from "./claim";

/**
 * What the tenant-wide step found for a new effect: the earlier effects on its identity from other
 * runs, and a value cap it would exceed. Either sends an auto-approved call to a human.
 */
export interface TenantCheck {
  claim: EffectClaim;
  /** The shards that hold the claim, which hear of its fate. */
  shards: number[];
  earlier: EarlierEffect[];
  /** A tenant-wide cap (per day, per subject or user and day) the call would exceed. */
  over: CapLimit | null;
  /** How long the step took, as the run's ledger measured it. */
  ms: number;
}

/** The earlier effects a human must see: none when the tenant lets this tool's effect repeat. */
export function effectsToConfirm(check: Pick<TenantCheck, "claim" | "earlier">): EarlierEffect[] {
  return check.claim.repeatable ? [] : check.earlier;
}

const CAP_WORDS = {
  per_run: "per-run",
  per_day: "daily",
  per_subject_day: "daily per-subject",
  per_user_day: "daily per-user",
  per_user_destructive_day: "daily per-user",
} as const satisfies Record<CapLimit["cap"], string>;

/** Why a call waits for a human, in the words of an approval's reasons. */
export function crossRunReasons(earlier: readonly EarlierEffect[], limit: CapLimit | null): string[] {
  const reasons: string[] = [];
  const [first] = earlier;
  if (first) {
    const named = Object.entries(first.identity)
      .map(([field, value]) => `${field} ${typeof value === "string" ? value : JSON.stringify(value)}`)
      .join(", ");
    const more = earlier.length > 1 ? ` and ${earlier.length - 1} more` : "";
    const id = first.external_id ? `, ${first.external_id}` : "";
    reasons.push(
      `another run already acted on the same ${named} (run ${first.run_id} at ${first.at}, ${first.outcome.replace("_", " ")}${id})${more}`,
    );
  }
  if (limit) {
    const subject = limit.subject ? ` for ${limit.subject}` : "";
    if (limit.cap === "per_user_destructive_day") {
      reasons.push(
        `it would exceed the daily per-user cap of destructive calls${subject}: ${limit.used} made and ${limit.reserved} reserved of ${limit.limit}`,
      );
      return reasons;
    }
    reasons.push(
      `it would exceed the ${CAP_WORDS[limit.cap]} ${limit.currency} cap${subject}: ${limit.used} used and ${limit.reserved} reserved of ${limit.limit}, this call moves ${limit.amount}`,
    );
  }
  return reasons;
}
