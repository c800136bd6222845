import * as z from "zod";
import { runStatusSchema } from "./run-status";
import { traceEntrySchema } from "./trace-entry";

/** What `GET /v1/runs/{run_id}/trace` answers in `data`: the run's status and a page of its dispatches, in order. */
export const RunTraceSchema = z.strictObject({
  run: runStatusSchema(),
  entries: z.array(traceEntrySchema()),
  next_cursor: z
    .string()
    .nullable()
    .describe(
      "Pass it as cursor for the next page; null when this page holds the run's last dispatch so far.",
    ),
});
export type RunTrace = z.infer<typeof RunTraceSchema>;
