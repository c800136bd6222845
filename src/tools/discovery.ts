import * as z from "zod";
import { type BuiltinHandler, defineBuiltinTool, type ToolSpec } from "../catalog/define-tool";
import { rankTools } from "../catalog/search";
import { FIND_TOOLS, USE_TOOL } from "../catalog/subset";
import { SIDE_EFFECTS } from "../wire/side-effect";

/** Tools one `find_tools` call returns at most. */
export const MAX_FOUND_TOOLS = 5;

const FoundToolSchema = z.object({
  name: z.string(),
  namespace: z.string(),
  title: z.string(),
  side_effect: z.enum(SIDE_EFFECTS),
  does: z.string(),
  use_when: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});

const FoundToolsSchema = z.object({ tools: z.array(FoundToolSchema) });

/** find_tools' handler: the granted tools that match the query best, as compact specs. */
const findGrantedTools: BuiltinHandler = (args, _pages, granted) => {
  const limit = typeof args.limit === "number" ? args.limit : MAX_FOUND_TOOLS;
  const found = rankTools(granted, String(args.query), limit);
  return {
    ok: true,
    data: {
      tools: found.map((tool) => ({
        name: tool.name,
        namespace: tool.namespace,
        title: tool.title,
        side_effect: tool.side_effect,
        does: tool.description.does,
        use_when: tool.description.use_when,
        input_schema: z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }),
      })),
    },
  };
};

const CATALOG_TEXT = "the catalog's own text, checked when the catalog loads";

/** `find_tools`: a read that searches the tools the tenant grants the run, by intent. */
export function findTools(namespace: string): ToolSpec {
  return defineBuiltinTool(
    {
      name: FIND_TOOLS,
      namespace,
      version: "1",
      title: "Find a tool for a task",
      description: {
        does: "Searches the tools this tenant grants by what you need done (their names, titles and descriptions) and returns the best matches with their input schemas.",
        use_when:
          "None of your listed tools fits the task, e.g. find_tools({query: 'track a parcel'}); then call the match with use_tool.",
        avoid_when: "A listed tool already does it: call that tool directly instead of searching.",
        side_effects: "None. Searches count against the run's calls and its discovery limit.",
      },
      input: z.strictObject({
        query: z
          .string()
          .min(2)
          .max(200)
          .describe("What you need done, in a few words, such as reroute a shipment."),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_FOUND_TOOLS)
          .optional()
          .describe(`How many tools to return, 1 to ${MAX_FOUND_TOOLS}; ${MAX_FOUND_TOOLS} when omitted.`),
      }),
      output: FoundToolsSchema,
      timeout_ms: 1_000,
      trusted_text: {
        "tools[].name": CATALOG_TEXT,
        "tools[].namespace": CATALOG_TEXT,
        "tools[].title": CATALOG_TEXT,
        "tools[].does": CATALOG_TEXT,
        "tools[].use_when": CATALOG_TEXT,
      },
    },
    findGrantedTools,
  );
}

/** use_tool is resolved to the tool it names before anything runs; this answer is never reached. */
const resolvedBeforeRun: BuiltinHandler = () => ({
  ok: false,
  failure: { code: "validation_error", message: "use_tool runs the tool it names; name one." },
});

/**
 * `use_tool`: calls a tool `find_tools` found, with every guarantee of a direct call of it (its
 * side-effect class, key, budgets, approvals, policies and postcondition). It may run anything
 * granted, so it carries the most cautious annotations: destructive, open world.
 */
export function useTool(namespace: string): ToolSpec {
  const tool = defineBuiltinTool(
    {
      name: USE_TOOL,
      namespace,
      version: "1",
      title: "Call a tool found with find_tools",
      description: {
        does: "Calls the named tool with the given arguments, exactly as if it were one of your listed tools.",
        use_when:
          "find_tools returned the tool you need, e.g. use_tool({name: 'reroute_shipment', arguments: {...}}).",
        avoid_when: "The tool is one of your listed tools: call it directly.",
        side_effects:
          "Those of the named tool: it may write or destroy; its own approvals, budgets and policies apply.",
      },
      input: z.strictObject({
        name: z
          .string()
          .min(1)
          .max(130)
          .describe("The tool's name as find_tools returned it, or namespace.name when two share a name."),
        arguments: z
          .record(z.string(), z.unknown())
          .describe("The tool's arguments, as its input_schema from find_tools describes them."),
      }),
      output: z.unknown(),
      timeout_ms: 1_000,
    },
    resolvedBeforeRun,
  );
  return { ...tool, side_effect: "destructive", open_world: true };
}
