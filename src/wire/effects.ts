import * as z from "zod";

/**
 * What an agent and an operator are told of the tenant-wide state of effects: an earlier effect on
 * the same business thing from another run, and a value cap a call would exceed.
 */

/** How far an earlier effect got: about to be made, waiting for a human, sent (fate unknown yet), confirmed. */
export const EARLIER_EFFECT_STATES = ["reserved", "awaiting_approval", "sent", "confirmed"] as const;

export const EarlierEffectSchema = z.strictObject({
  run_id: z.string(),
  tool: z.string().describe("The tool as namespace.name."),
  at: z.iso.datetime().describe("When its key was reserved, which is when it started to count."),
  args: z.record(z.string(), z.unknown()).describe("Its arguments, sensitive fields masked."),
  identity: z
    .record(z.string(), z.unknown())
    .describe("The arguments that name the business thing (all of them when the tool declares none)."),
  outcome: z.enum(EARLIER_EFFECT_STATES),
  external_id: z.string().nullable().describe("The upstream's id of what it did, once confirmed."),
});
export type EarlierEffect = z.infer<typeof EarlierEffectSchema>;

export const VALUE_CAPS = [
  "per_run",
  "per_day",
  "per_subject_day",
  "per_user_day",
  "per_user_destructive_day",
] as const;
export type ValueCapName = (typeof VALUE_CAPS)[number];

export const CapLimitSchema = z.strictObject({
  cap: z.enum(VALUE_CAPS),
  currency: z
    .string()
    .describe(
      "The currency of a value cap; `calls` for per_user_destructive_day, which counts destructive calls (and its figures are calls).",
    ),
  subject: z
    .string()
    .nullable()
    .describe(
      "The subject a per-subject cap counts for, or the user (their `sub`) a per-user cap counts for.",
    ),
  limit: z.number().int().describe("The cap, in the currency's minor unit."),
  used: z.number().int().describe("Confirmed today (or in the run), operator overrides included."),
  reserved: z.number().int().describe("Reserved by calls not yet confirmed."),
  remaining: z.number().int().describe("What can still be reserved: limit − used − reserved, at least 0."),
  amount: z.number().int().describe("What this call would move."),
});
export type CapLimit = z.infer<typeof CapLimitSchema>;

/** A currency's value moved today: per cap, as the tenant's shards report it (operator's view). */
export const ValueUsageSchema = z.strictObject({
  currency: z.string(),
  day: z.string(),
  per_day: z.number().int().nullable(),
  used: z.number().int(),
  reserved: z.number().int(),
  overrides: z.number().int().describe("Value approved beyond a cap by an operator."),
});
export type ValueUsage = z.infer<typeof ValueUsageSchema>;

/** `GET /v1/value-usage`: each capped currency's day so far, summed over the tenant's effect shards. */
export const ValueUsageReportSchema = z.strictObject({ usage: z.array(ValueUsageSchema) });
export type ValueUsageReport = z.infer<typeof ValueUsageReportSchema>;
