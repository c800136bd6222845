import * as z from "zod";
import { defineTool } from "../../../src/catalog/define-tool";

/** A read tool that breaks no catalog rule: the unit tests' starting point for a catalog. */
export const widgetLookup = defineTool({
  name: "lookup_widget",
  namespace: "widgets",
  version: "1",
  title: "Look up a widget",
  side_effect: "read",
  description: {
    does: "Returns one widget by id with its current stock level.",
    use_when: "You need facts about a widget, e.g. lookup_widget({widget_id: 'W1'}).",
    avoid_when: "You want to change a widget; this tool only reads.",
    side_effects: "None. Safe to call again.",
  },
  input: z.strictObject({ widget_id: z.string().describe("The widget id, such as W1.") }),
  output: z.object({ widget_id: z.string() }),
  upstream: {
    binding: "WIDGETS_API",
    request: (args) => ({ method: "GET", path: `/widgets/${args.widget_id}` }),
  },
  timeout_ms: 10_000,
  trusted_text: { widget_id: "an id the widget API issues" },
});
