import * as z from "zod";
import { RunLimitsSchema } from "../config/tenants";
import { BudgetSchema, EnvironmentSchema } from "../envelope";
import { budgetLeft } from "../pipeline/budget";
import type { RunMeta } from "../pipeline/run-state";

/** Which call first brought third-party text into the run. */
export const TaintSchema = z.strictObject({
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
});
export type Taint = z.infer<typeof TaintSchema>;

/** What a run has spent so far. */
export const CountersSchema = z.strictObject({
  calls_used: z.number().int().nonnegative(),
  writes_used: z.number().int().nonnegative(),
  destructive_used: z.number().int().nonnegative(),
});
export type Counters = z.infer<typeof CountersSchema>;

/** What `GET /v1/runs/{id}` reports: the run's state, what it has spent and what is left. */
export const RunStatusSchema = z.strictObject({
  run_id: z.string(),
  namespace: z.string(),
  environment: EnvironmentSchema,
  state: z.enum(["open", "closed", "expired"]),
  created_at: z.iso.datetime(),
  deadline_at: z.iso.datetime(),
  ended_at: z.iso.datetime().nullable(),
  catalog_version: z.string(),
  limits: RunLimitsSchema,
  used: CountersSchema,
  budget: BudgetSchema,
  tainted_by: TaintSchema.nullable().describe(
    "Set once the run has read third-party text: from then on writes and destructive calls wait for a human (or are refused, per the tenant's tainted_runs policy).",
  ),
});
export type RunStatus = z.infer<typeof RunStatusSchema>;

export function runStatus(run: RunMeta, now: number): RunStatus {
  return {
    run_id: run.run_id,
    namespace: run.namespace,
    environment: run.environment,
    state: run.state === "open" && now >= run.deadline_at ? "expired" : run.state,
    created_at: new Date(run.created_at).toISOString(),
    deadline_at: new Date(run.deadline_at).toISOString(),
    ended_at: run.ended_at === null ? null : new Date(run.ended_at).toISOString(),
    catalog_version: run.catalog_version,
    limits: run.limits,
    used: run.counters,
    budget: budgetLeft(run.limits, run.counters, run.deadline_at, now),
    tainted_by: run.tainted_by,
  };
}
