import type { CallRecord } from "../machine/run-state";
import type { FailureSpec } from "../wire/envelope";

/**
 * What is known of the effect of a key when a call under it is refused: nothing happened (no record,
 * or it waits for a human), unknown (sent, fate unclear), or what the stored outcome says. A refusal
 * never claims "no effect" for a key whose effect happened.
 */
export function knownEffect(
  record: CallRecord | null,
): Pick<FailureSpec, "side_effect_confirmed" | "external_id"> & { observed: Record<string, unknown> | null } {
  if (!record || record.state === "held") return { side_effect_confirmed: false, observed: null };
  if (record.state !== "completed" || !record.envelope)
    return { side_effect_confirmed: null, observed: null };
  const stored = record.envelope;
  const confirmed = stored.outcome === "success" ? true : (stored.error?.side_effect_confirmed ?? null);
  return {
    side_effect_confirmed: confirmed,
    external_id: stored.error?.external_id ?? externalId(stored.data),
    observed: {
      stored_outcome: {
        call_id: stored.call_id,
        outcome: stored.outcome,
        data: stored.data,
        error_code: stored.error?.code ?? null,
      },
    },
  };
}

/** The upstream's own id of a claimed effect (a refund id, a ticket id), if it names one. */
export function externalId(claimed: unknown): string | null {
  if (typeof claimed !== "object" || claimed === null) return null;
  for (const [field, value] of Object.entries(claimed as Record<string, unknown>)) {
    if (
      field.endsWith("_id") &&
      typeof value === "string" &&
      field !== "order_id" &&
      field !== "customer_id"
    ) {
      return value;
    }
  }
  return null;
}
