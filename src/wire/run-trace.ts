import * as z from "zod";
import { RunStatusSchema } from "./run-status";
import { TraceEntrySchema } from "./trace-entry";

/** What `GET /v1/runs/{run_id}/trace` answers in `data`: the run's status and every dispatch, in order. */
export const RunTraceSchema = z.strictObject({
  run: RunStatusSchema,
  entries: z.array(TraceEntrySchema),
});
export type RunTrace = z.infer<typeof RunTraceSchema>;
