import type { EarlierEffect } from "../wire/effects";
import type { ApprovalState, Envelope } from "../wire/envelope";

/**
 * How far a claimed effect got, as its run's ledger knows it. The tenant's shards hold a copy that
 * only moves forward: pending (claimed, the key not yet committed), held (waiting for a human), sent
 * (may have acted), then confirmed or released (refuted, rejected, expired, or never dispatched).
 */
export type EffectFate = "pending" | "held" | "sent" | "confirmed" | "released";

const RANK = { pending: 0, held: 1, sent: 2, confirmed: 3, released: 3 } as const satisfies Record<
  EffectFate,
  number
>;

/** The fate a shard keeps when told `next` while holding `current`: never backwards, never out of an end. */
export function advanceFate(current: EffectFate, next: EffectFate): EffectFate {
  if (RANK[current] === 3) return current;
  return RANK[next] >= RANK[current] ? next : current;
}

/**
 * A committed key's fate from its record and approval. A key without a record was never
 * dispatched; a completed one is confirmed or refuted by its stored answer, and stays sent while
 * that answer leaves the effect unknown.
 */
export function fateOfKey(
  record: { state: "held" | "sending" | "in_doubt" | "completed"; envelope: Envelope | null } | null,
  approval: { state: ApprovalState } | null,
): EffectFate {
  if (!record) return "released";
  switch (record.state) {
    case "held":
      return approval && (approval.state === "rejected" || approval.state === "expired")
        ? "released"
        : "held";
    case "sending":
    case "in_doubt":
      return "sent";
    case "completed": {
      const stored = record.envelope;
      const confirmed = stored?.outcome === "success" ? true : (stored?.error?.side_effect_confirmed ?? null);
      if (confirmed === true) return "confirmed";
      return confirmed === false ? "released" : "sent";
    }
  }
}

/** How an earlier effect is shown: its fate in the words of `EarlierEffect.outcome`. */
export function earlierOutcome(fate: Exclude<EffectFate, "released">): EarlierEffect["outcome"] {
  switch (fate) {
    case "pending":
      return "reserved";
    case "held":
      return "awaiting_approval";
    case "sent":
      return "sent";
    case "confirmed":
      return "confirmed";
  }
}
