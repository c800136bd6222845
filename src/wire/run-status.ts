import * as z from "zod";
import { lazily } from "../core/lazily";
import { budgetSchema, EnvironmentSchema } from "./envelope";
import { runUserSchema } from "./run-user";

/** Run limits: what a run may spend. A tenant's ceilings bound what any of its runs may ask for. */
export const runLimitsSchema = lazily(() =>
  z.strictObject({
    max_calls: z.number().int().min(1).max(10_000),
    max_writes: z.number().int().min(0).max(1_000),
    max_destructive: z.number().int().min(0).max(100),
    deadline_s: z.number().int().min(1).max(86_400),
  }),
);
export type RunLimits = z.infer<ReturnType<typeof runLimitsSchema>>;

/** Which call first brought third-party text into the run. */
export const taintSchema = lazily(() =>
  z.strictObject({
    call_id: z.string(),
    tool: z.string(),
    at: z.iso.datetime(),
    text: z
      .string()
      .max(500)
      .optional()
      .describe(
        "The third-party text that tainted the run, as the model saw it: masked, normalised and fenced, at most 500 characters.",
      ),
  }),
);
export type Taint = z.infer<ReturnType<typeof taintSchema>>;

/** What a run has spent so far. */
export const countersSchema = lazily(() =>
  z.strictObject({
    calls_used: z.number().int().nonnegative(),
    writes_used: z.number().int().nonnegative(),
    destructive_used: z.number().int().nonnegative(),
  }),
);
export type Counters = z.infer<ReturnType<typeof countersSchema>>;

/** What `GET /v1/runs/{id}` reports: the run's state, what it has spent and what is left. */
export const runStatusSchema = lazily(() =>
  z.strictObject({
    run_id: z.string(),
    namespace: z.string(),
    environment: EnvironmentSchema,
    state: z.enum(["open", "closed", "expired"]),
    created_at: z.iso.datetime(),
    deadline_at: z.iso.datetime(),
    ended_at: z.iso.datetime().nullable(),
    catalog_version: z.string(),
    limits: runLimitsSchema(),
    used: countersSchema(),
    budget: budgetSchema(),
    tainted_by: taintSchema()
      .nullable()
      .describe(
        "Set once the run has read third-party text: from then on writes and destructive calls wait for a human (or are refused, per the tenant's tainted_runs policy).",
      ),
    user: runUserSchema()
      .optional()
      .describe("Whom the run acts for: the user its opener's verified assertion named. Absent: no user."),
  }),
);
export type RunStatus = z.infer<ReturnType<typeof runStatusSchema>>;
