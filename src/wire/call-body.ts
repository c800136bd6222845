import * as z from "zod";

/**
 * `POST /v1/runs/{run_id}/calls` as `parseCallBody` reads it. The arguments' own schema depends on
 * the tool and the run's namespace: `GET /v1/tools` serves it, this schema does not list tools.
 * `readCallBody` checks a body with this schema and words its issues itself, so an agent gets a
 * hint it can act on rather than a zod message.
 */
export const CallBodySchema = z.strictObject({
  tool: z.string().min(1).describe("The tool to call, a name from the run's namespace such as lookup_order."),
  args: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The tool's arguments; see the tool's input_schema. Omitted means {}."),
});
