import * as z from "zod";
import { FaultModeSchema } from "../scenarios/modes";

/**
 * A scenario step as the run keeps it and `POST /v1/runs` reports it: the orchestrator's step with
 * its defaults filled in, so the run shows exactly what will be sent upstream.
 */
export const RunScenarioStepSchema = z.strictObject({
  mode: FaultModeSchema,
  tool: z.string().nullable(),
  path_prefix: z.string().nullable(),
  times: z.number().int().min(1),
  hang_ms: z.number().int().nonnegative().nullable(),
  retry_after_s: z.number().int().nonnegative().nullable(),
});
export type RunScenarioStep = z.infer<typeof RunScenarioStepSchema>;
