import type { SIDE_EFFECTS } from "../wire/side-effect";

/**
 * What a write or destructive tool's effect is across runs: the identity two runs' calls must share
 * to act on the same thing, and the value it moves. Part of every tool's spec (`define-tool.ts`).
 */

/** How long a second effect on the same identity from another run counts as a repeat, by default. */
export const DEFAULT_EFFECT_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * The identity of a call's effect across runs: the argument fields that name the business thing it
 * changes (an order for a refund), and the window in which a second effect on it is a repeat.
 */
export interface EffectIdentity {
  /** Top-level argument names; null: the tool plus its whole canonical arguments. */
  fields: readonly string[] | null;
  window_ms: number;
  /** The run's user (docs/users.md) is part of the identity; a run that acts for no user adds none. */
  per_user?: boolean;
}

/** The value a call's effect moves: an integer argument counted in a currency's minor unit. */
export interface EffectValue {
  /** A top-level integer argument, such as `amount_cents`. */
  field: string;
  /** An ISO 4217 code: the tenant's caps are set per currency. */
  currency: string;
  /** The top-level argument naming whom per-subject caps count for (a customer, an order); null: none. */
  subject: string | null;
}

/** The effect identity every write and destructive tool has unless it declares its own. */
export function defaultEffect(sideEffect: (typeof SIDE_EFFECTS)[number]): EffectIdentity | null {
  return sideEffect === "write" || sideEffect === "destructive"
    ? { fields: null, window_ms: DEFAULT_EFFECT_WINDOW_MS }
    : null;
}
