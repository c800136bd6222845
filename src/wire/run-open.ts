import * as z from "zod";
import { NeutralToolSchema } from "./neutral-tool";
import { runStatusSchema } from "./run-status";
import { runScenarioStepSchema } from "./scenario";

/** What `POST /v1/runs` answers in `data`: the new run's status, its token and its tools. */
export const RunOpenedSchema = runStatusSchema().extend({
  run_token: z
    .string()
    .describe("The agent's credential for this run and namespace only; never the tenant key."),
  expires_at: z.iso.datetime().describe("When the run token stops working."),
  retained_until: z.iso.datetime().describe("Until when the run's data (status, trace, pages) is kept."),
  scenario: z
    .array(runScenarioStepSchema())
    .optional()
    .describe("The accepted fault scenario, with its defaults; only when one was asked for."),
  task_key: z.string().optional().describe("The task key the run was opened for, when one was sent."),
  reused: z
    .boolean()
    .optional()
    .describe("With a task key: true when this task's run already existed and is answered again."),
  tools: z.array(NeutralToolSchema).describe("The namespace's tools in the jsonschema format."),
});
export type RunOpened = z.infer<typeof RunOpenedSchema>;
