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
});
export type NeutralTool = z.infer<typeof NeutralToolSchema>;
