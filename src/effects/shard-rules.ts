import type { CapLimit, EarlierEffect } from "../wire/effects";
import { capLimit, leaseWant, type ValueTotals } from "./caps";
import { type EffectClaim, type UserDayCaps, userKey } from "./claim";
import { advanceFate, type EffectFate } from "./fate";

/**
 * What one of a tenant's effect shards decides, as pure rules: whether a claim's value fits the
 * caps the shard holds and which earlier effects it repeats (a reservation), how far a reported
 * effect moves its claim (an update), what reconciling a pending claim does, and when the shard's
 * alarm rings and what it prunes. The shard (ledger/effect-shard.ts) reads its rows, asks these
 * rules, and writes what they answer.
 */

/**
 * How long a claim whose key no ledger has committed waits before the shard asks the run's ledger
 * what became of it. The question, not the wait, decides: a claim is released only when the ledger
 * answers that the key was never committed and no call is deciding it.
 */
export const RECONCILE_AFTER_MS = 5_000;
/** Rows are kept a day past their window and their day, then pruned. */
const KEEP_MS = 24 * 60 * 60 * 1000;
/** The soonest an alarm is set for: a moment ahead, so a claim still deciding is asked about again later. */
const ALARM_AFTER_MS = 1_000;

/** What one shard is asked to hold of a claim: its identity, its value against one or both caps. */
export interface ShardReservation {
  tenant: string;
  shard: number;
  shards: number;
  claim: EffectClaim;
  identity: boolean;
  /** The tenant's daily cap for the claim's currency, when this shard reserves against its lease of it. */
  per_day: number | null;
  /** The per-subject daily cap, when this shard holds the claim's subject. */
  per_subject_day: number | null;
  /** The user's daily caps, when this shard holds the claim's user. */
  per_user_day?: UserDayCaps | null;
  /**
   * The key of the same run's claim this one replaces (an operator edited its call before approving
   * it): its value is not counted against this claim, since only one of the two can ever be sent.
   * Its row is released when the edit's commit reports it.
   */
  replaces?: string | null;
}

export interface ShardVerdict {
  earlier: EarlierEffect[];
  over: CapLimit | null;
}

/** A committed key's fate, as its run's outbox reports it. */
export interface EffectUpdate {
  key: string;
  fate: EffectFate;
  external_id: string | null;
  /** Sent although its value did not fit: an operator approved it beyond the cap. */
  override: boolean;
}

/**
 * How a claim's value counts: not against a cap this shard holds (none), reserved within the caps
 * (counted), beyond one (over), or sent beyond one by an operator's approval (override, which counts
 * as used).
 */
export type ValueState = "none" | "counted" | "over" | "override";

/** What a shard holds of a day's cap, its own part, and all shards' parts together: as its pool answers it (ledger/cap-pool.ts). */
export interface LeaseHeld {
  granted: number;
  leased: number;
}

/**
 * What the rules read of a shard's live claims (released ones left out), every read leaving out the
 * claim a reservation replaces. Asked only for what a decision needs, so a claim with no value
 * reads no totals.
 */
export interface ShardReads {
  /** Used and reserved value of the claims held against a subject's cap on a day. */
  subjectTotals(currency: string, day: string, subject: string): ValueTotals;
  /** Used and reserved value of the claims held against a user's value cap on a day. */
  userTotals(currency: string, day: string, user: string): ValueTotals;
  /** Used and reserved destructive calls held against a user's cap on a day, one unit each. */
  userDestructive(day: string, user: string): ValueTotals;
  /** What the claims counted against the day's cap hold of this shard's lease: counted and overridden value. */
  dayHeld(currency: string, day: string): number;
  /** Used and reserved value of the claims counted against the day's cap. */
  dayTotals(currency: string, day: string): ValueTotals;
  /** This shard's lease of a day's cap. */
  lease(currency: string, day: string): LeaseHeld;
  /** The live effects of other runs on the claim's identity within its window, oldest first. */
  earlier(claim: EffectClaim): EarlierEffect[];
}

/** The tenant's daily cap a claim is reserved against in this shard: only a claim with a value has one. */
export function dayCapOf(request: ShardReservation): number | null {
  return request.per_day !== null && request.claim.value ? request.per_day : null;
}

/** The cap of the claim's subject and day it exceeds in this shard, if it holds that cap. */
export function subjectOver(request: ShardReservation, reads: ShardReads): CapLimit | null {
  const { claim, per_subject_day: cap } = request;
  if (cap === null || !claim.value || claim.value.subject === null) return null;
  const totals = reads.subjectTotals(claim.value.currency, claim.day, claim.value.subject);
  return capLimit("per_subject_day", cap, totals, claim.value);
}

/**
 * The cap of the claim's user and day it exceeds in this shard, if it holds that user: their
 * destructive calls first (each counts one), then the value moved in the claim's currency.
 */
export function userOver(request: ShardReservation, reads: ShardReads): CapLimit | null {
  const { claim } = request;
  const caps = request.per_user_day ?? null;
  if (caps === null || !claim.user) return null;
  const user = userKey(claim.user);
  if (caps.destructive !== null && claim.destructive) {
    const totals = reads.userDestructive(claim.day, user);
    const unit = { amount: 1, currency: "calls", subject: claim.user.sub };
    const over = capLimit("per_user_destructive_day", caps.destructive, totals, unit);
    if (over) return over;
  }
  if (caps.value === null || !claim.value) return null;
  const totals = reads.userTotals(claim.value.currency, claim.day, user);
  return capLimit("per_user_day", caps.value, totals, { ...claim.value, subject: claim.user.sub });
}

/** Whether this shard counts the claim against its user's caps: it holds the user, and a cap applies. */
function userRole(request: ShardReservation): boolean {
  const { claim } = request;
  const caps = request.per_user_day ?? null;
  if (caps === null || !claim.user) return false;
  return (
    (caps.destructive !== null && claim.destructive === true) || (caps.value !== null && claim.value !== null)
  );
}

/** A day's lease a reservation may need topped up before it is decided. */
export interface LeaseNeed {
  currency: string;
  day: string;
  amount: number;
  /** The tenant's daily cap. */
  cap: number;
}

/**
 * The lease of the day a reservation may top up first, or null when it needs none: no daily cap
 * here, or a claim its subject's or user's cap already holds, which waits for a human whatever this shard
 * leases (a part taken for it, never given back, would only keep the day's room from calls that fit).
 */
export function leaseNeed(request: ShardReservation, reads: ShardReads): LeaseNeed | null {
  const cap = dayCapOf(request);
  const value = request.claim.value;
  if (cap === null || !value || subjectOver(request, reads) !== null || userOver(request, reads) !== null)
    return null;
  return { currency: value.currency, day: request.claim.day, amount: value.amount, cap };
}

/** How much the lease lacks for the claim to fit: above zero, the shard asks its pool for more. */
export function leaseLacking(need: LeaseNeed, reads: ShardReads): number {
  return reads.dayHeld(need.currency, need.day) + need.amount - reads.lease(need.currency, need.day).granted;
}

/** The totals a shard asks its pool to raise its part to: what it would like to hold, and what it must. */
export function leaseAsk(
  held: number,
  lacking: number,
  cap: number,
  shards: number,
): { want: number; need: number } {
  return { want: held + leaseWant(lacking, cap, shards), need: held + lacking };
}

/**
 * Whether the claim fits this shard's lease of the day. Told as the day's cap: what this shard
 * used and reserved, the other shards' leases counted as used (this shard cannot see inside them).
 */
export function dayOver(claim: EffectClaim, cap: number, reads: ShardReads): CapLimit | null {
  if (!claim.value) return null;
  const { currency, amount } = claim.value;
  const lease = reads.lease(currency, claim.day);
  if (reads.dayHeld(currency, claim.day) + amount <= lease.granted) return null;
  const own = reads.dayTotals(currency, claim.day);
  const totals = { used: own.used + Math.max(0, lease.leased - lease.granted), reserved: own.reserved };
  // A lease short of the claim does not fit it even where the cap, as this shard sees it, has room.
  return (
    capLimit("per_day", cap, totals, claim.value) ?? {
      cap: "per_day",
      currency,
      subject: null,
      limit: cap,
      ...totals,
      remaining: Math.max(0, cap - totals.used - totals.reserved),
      amount,
    }
  );
}

/** A reservation decided: the verdict its caller gets, and how its row counts. */
export interface Reservation {
  verdict: ShardVerdict;
  /** The claim is counted against the day's cap in this shard. */
  day_role: boolean;
  /** The claim is counted against its subject's cap in this shard. */
  subject_role: boolean;
  /** The claim is counted against its user's caps in this shard. */
  user_role: boolean;
  value_state: ValueState;
  /** The daily cap it was decided against, which an operator's approval beyond it is charged to. */
  day_cap: number | null;
}

/**
 * Decides a claim once its lease is topped up: the earlier effects it repeats (for the identity's
 * shard, unless the tenant lets the tool repeat), and the first cap it exceeds: its subject's, then
 * its user's, then the day's.
 */
export function decideReservation(request: ShardReservation, reads: ShardReads): Reservation {
  const { claim } = request;
  const day = dayCapOf(request);
  const verdict: ShardVerdict = {
    earlier: request.identity && !claim.repeatable ? reads.earlier(claim) : [],
    over:
      subjectOver(request, reads) ??
      userOver(request, reads) ??
      (day !== null ? dayOver(claim, day, reads) : null),
  };
  const user = userRole(request);
  const valued = (claim.value !== null && (day !== null || request.per_subject_day !== null)) || user;
  return {
    verdict,
    day_role: day !== null,
    subject_role: request.per_subject_day !== null,
    user_role: user,
    value_state: !valued ? "none" : verdict.over ? "over" : "counted",
    day_cap: day,
  };
}

/** A claim's row as an update finds it. */
export interface UpdatedRow {
  fate: EffectFate;
  value_state: ValueState;
  currency: string | null;
  day_cap: number | null;
}

/**
 * How far a report moves a claim: its fate only forwards, so a late or repeated report changes
 * nothing; a value beyond a cap that an operator's approval sent becomes an override, which is to
 * be charged to the day's pool (`charge`).
 */
export function applyUpdate(
  row: UpdatedRow,
  update: EffectUpdate,
): { fate: EffectFate; value_state: ValueState; charge: boolean } {
  const fate = advanceFate(row.fate, update.fate);
  const sentBeyond =
    update.override && row.value_state === "over" && (fate === "sent" || fate === "confirmed");
  const valueState = sentBeyond ? "override" : row.value_state;
  return {
    fate,
    value_state: valueState,
    charge: valueState === "override" && row.currency !== null && row.day_cap !== null,
  };
}

/**
 * Overrides count as used across shards: what a shard holds of a day past its part (value an
 * operator sent beyond the cap) is asked of the pool's room, so no other shard leases it again.
 * The total to cover, or null when the part covers it.
 */
export function overridesToCover(held: number, lease: LeaseHeld): number | null {
  return held > lease.granted ? held : null;
}

/**
 * What reconciling a pending claim writes, from what its ledger answers: the key's fate, or nothing
 * while a call is still deciding it.
 */
export function reconciledFate(answer: EffectFate | "deciding"): EffectFate | null {
  return answer === "deciding" ? null : answer;
}

/** Pending claims made at or before this moment are due to be reconciled. */
export function reconcileDue(now: number): number {
  return now - RECONCILE_AFTER_MS;
}

/**
 * What the alarm prunes: settled rows whose window ended and that were made long enough ago, and
 * leases of days past.
 */
export function pruneBefore(now: number): { until: number; at: number; leaseDay: string } {
  return {
    until: now - KEEP_MS,
    at: now - 2 * KEEP_MS,
    leaseDay: new Date(now - 2 * KEEP_MS).toISOString().slice(0, 10),
  };
}

/**
 * A new claim may be orphaned (its call refused or abandoned before its key was committed), so the
 * alarm is moved to reconcile it RECONCILE_AFTER_MS after it was made, if it would ring later: an
 * alarm set for a prune, a day or two ahead, would leave the claim holding its value until then.
 * The time to set, or null to leave the alarm as it is.
 */
export function alarmForClaim(at: number, now: number, set: number | null): number | null {
  const due = Math.max(at + RECONCILE_AFTER_MS, now + ALARM_AFTER_MS);
  return set === null || set > due ? due : null;
}

/**
 * When the alarm rings next: for the first pending claim to reconcile (a claim whose call is still
 * deciding is asked about again a moment later, not at once), else for the next prune; null when
 * the shard holds nothing.
 */
export function nextAlarm(firstPending: number | null, oldest: number | null, now: number): number | null {
  if (firstPending !== null) return Math.max(firstPending + RECONCILE_AFTER_MS, now + ALARM_AFTER_MS);
  return oldest !== null ? oldest + 2 * KEEP_MS : null;
}
