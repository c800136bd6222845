import * as z from "zod";
import { runStatusSchema } from "./run-status";

/** What the tenant-wide directory keeps of a run, for listing and searching runs without waking them. */
export const RunSummarySchema = z.strictObject({
  run_id: z.string(),
  namespace: z.string(),
  state: runStatusSchema().shape.state.describe(
    "open, closed (ended), or expired (still open past its deadline: nothing more executes).",
  ),
  created_at: z.iso.datetime(),
  deadline_at: z.iso.datetime(),
  ended_at: z.iso.datetime().nullable(),
  calls_used: z
    .number()
    .int()
    .nonnegative()
    .describe("Calls charged when the run last told the directory something new; final once it ended."),
  tools: z.array(z.string()).describe("Every tool the run called, sorted."),
  subjects: z
    .array(z.string())
    .describe('The ids its calls named, as "key=value" (top-level string arguments ending in _id), sorted.'),
  last_activity_at: z.iso.datetime().describe("When the run last told the directory something new."),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** What a run's ledger writes through to the directory: a run is open or closed; expiry is computed. */
export type RunIndexEntry = Omit<RunSummary, "state"> & { state: "open" | "closed" };

export const RUN_LIST_STATES = ["open", "closed", "expired", "all"] as const;
export const RunListStateSchema = z.enum(RUN_LIST_STATES);

/** What `GET /v1/runs` answers in `data`: one page of the tenant's runs, newest first. */
export const RunListSchema = z.strictObject({
  state: RunListStateSchema,
  runs: z.array(RunSummarySchema),
  next_cursor: z
    .string()
    .nullable()
    .describe("Pass it as cursor for the next page, with the same filters; null on the last page."),
});
export type RunList = z.infer<typeof RunListSchema>;
