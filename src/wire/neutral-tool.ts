import * as z from "zod";
import { SideEffectSchema } from "./side-effect";

/** A tool as a run sees it in `POST /v1/runs` and `format=jsonschema`: no vendor wrapping. */
export const NeutralToolSchema = z.strictObject({
  name: z.string(),
  title: z.string(),
  version: z.string(),
  side_effect: SideEffectSchema,
  description: z.string(),
  input_schema: z
    .looseObject({ type: z.literal("object") })
    .describe("The JSON Schema (2020-12) of the tool's arguments."),
  dry_run: z
    .string()
    .nullable()
    .describe(
      "For a declared write or destructive tool: what its sandbox binding simulates and what only production would reveal. Null otherwise.",
    ),
});
export type NeutralTool = z.infer<typeof NeutralToolSchema>;
