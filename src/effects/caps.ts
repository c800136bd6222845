import type { CapLimit, ValueCapName } from "../wire/effects";

/**
 * The value caps' one rule, for every place that holds a total (the run's ledger for `per_run`, a
 * shard for a subject's or a user's day and for its lease of the tenant's day; a user's destructive
 * calls count as one unit each, in `calls`): a call may reserve its amount
 * only when what is used and reserved, plus the amount, stays within the cap. Overrides count as
 * used: an operator's approval beyond a cap does not make room for the next call.
 */

export interface ValueTotals {
  /** Confirmed, and approved beyond a cap by an operator. */
  used: number;
  /** Reserved by calls not yet confirmed. */
  reserved: number;
}

export function capLimit(
  cap: ValueCapName,
  limit: number,
  totals: ValueTotals,
  claim: { amount: number; currency: string; subject: string | null },
): CapLimit | null {
  if (totals.used + totals.reserved + claim.amount <= limit) return null;
  return {
    cap,
    currency: claim.currency,
    // A per-user cap is handed the user as its subject (`userOver`).
    subject: cap === "per_run" || cap === "per_day" ? null : claim.subject,
    limit,
    used: totals.used,
    reserved: totals.reserved,
    remaining: Math.max(0, limit - totals.used - totals.reserved),
    amount: claim.amount,
  };
}

/**
 * How much more of the tenant's daily cap a shard asks its pool for when its lease is short: what
 * it lacks, or a part of the cap large enough that most calls need no trip to the pool. The part is
 * the accuracy trade-off: a shard may hold some of a part unspent while another shard's call waits
 * for a human; near the cap the pool grants only what is lacking (`CapPool.lease`).
 */
export function leaseWant(lacking: number, cap: number, shards: number): number {
  return Math.max(lacking, leasePart(cap, shards));
}

/** The part of a daily cap a shard leases at a time while the cap has room for every shard's part. */
export function leasePart(cap: number, shards: number): number {
  return Math.ceil(cap / (4 * shards));
}
