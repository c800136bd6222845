import * as z from "zod";
import { lazily } from "../core/lazily";

/**
 * The sandbox upstream's fault modes (sandbox/API.md), as the proxy names them when it asks for one.
 * The proxy keeps its own list rather than importing the sandbox's: the sandbox stands in for a
 * third-party API, and test/workerd/scenarios.test.ts checks that the two lists agree.
 */

/** Answer instead of the application: a gateway page, a crash, a throttle, an outage. */
export const ANSWER_MODES = [
  "error_500",
  "bad_gateway",
  "html",
  "rate_limited",
  "transient_forever",
] as const;
/** Let the application run, then spoil how its answer arrives (the last five: more than a client should hold). */
export const DELIVERY_MODES = [
  "hang",
  "slow_success",
  "truncated",
  "huge_string",
  "huge_item",
  "many_items",
  "deep_nesting",
  "endless_stream",
] as const;
/** Change what a read says. */
export const READ_SHAPE_MODES = ["stale", "injection", "large"] as const;
/** Change what a write does. */
export const WRITE_SHAPE_MODES = ["partial_success", "silent_failure"] as const;

export const FAULT_MODES = [
  ...ANSWER_MODES,
  ...DELIVERY_MODES,
  ...READ_SHAPE_MODES,
  ...WRITE_SHAPE_MODES,
] as const;
export const FaultModeSchema = z.enum(FAULT_MODES);
export type FaultMode = z.infer<typeof FaultModeSchema>;

export const MAX_HANG_MS = 300_000;
export const MAX_RETRY_AFTER_S = 3_600;
export const MAX_SCENARIO_STEPS = 20;

export const scenarioStepSchema = lazily(() =>
  z.strictObject({
    mode: FaultModeSchema.describe("The fault to inject, one of the sandbox's modes (see sandbox/API.md)."),
    tool: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(
        "Only upstream requests made for this tool of the run's namespace, such as issue_refund. Give tool or path_prefix, not both; neither matches every request.",
      ),
    path_prefix: z
      .string()
      .startsWith("/")
      .max(200)
      .optional()
      .describe("Only upstream requests whose path starts with this, such as /refunds."),
    times: z
      .number()
      .int()
      .min(1)
      .max(1_000)
      .optional()
      .describe("How many matching requests suffer the fault: 1 by default, 1000 for transient_forever."),
    hang_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_HANG_MS)
      .optional()
      .describe("For hang and slow_success: how long the upstream waits, 30000 by default."),
    retry_after_s: z
      .number()
      .int()
      .min(0)
      .max(MAX_RETRY_AFTER_S)
      .optional()
      .describe("For rate_limited and transient_forever: the Retry-After the upstream sends, 1 by default."),
  }),
);
export type ScenarioStepInput = z.infer<ReturnType<typeof scenarioStepSchema>>;

export const scenarioSchema = lazily(() =>
  z
    .array(scenarioStepSchema())
    .max(MAX_SCENARIO_STEPS)
    .describe(
      "Upstream faults for this run, sandbox only: [{ mode, tool? | path_prefix?, times?, hang_ms?, retry_after_s? }].",
    ),
);

/**
 * A scenario step as the run keeps it and `POST /v1/runs` reports it: the orchestrator's step with
 * its defaults filled in, so the run shows exactly what will be sent upstream.
 */
export const runScenarioStepSchema = lazily(() =>
  z.strictObject({
    mode: FaultModeSchema,
    tool: z.string().nullable(),
    path_prefix: z.string().nullable(),
    times: z.number().int().min(1),
    hang_ms: z.number().int().nonnegative().nullable(),
    retry_after_s: z.number().int().nonnegative().nullable(),
  }),
);
export type RunScenarioStep = z.infer<ReturnType<typeof runScenarioStepSchema>>;
