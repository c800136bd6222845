import { z } from "zod";
import { catalog } from "../tools";

/** A tool as a run sees it: name, description for a model, side effect and JSON Schemas. */
export async function toolSpecsFor(namespace: string) {
  return catalog.tools(namespace).map((tool) => ({
    name: tool.name,
    title: tool.title,
    version: tool.version,
    side_effect: tool.side_effect,
    description: [
      tool.description.does,
      `Use when: ${tool.description.use_when}`,
      `Do not use when: ${tool.description.avoid_when}`,
      `Side effects: ${tool.description.side_effects}`,
    ].join("\n"),
    input_schema: z.toJSONSchema(tool.input, { io: "input", target: "draft-2020-12" }),
  }));
}
