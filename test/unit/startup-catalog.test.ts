import { describe, expect, it } from "vitest";
import * as z from "zod";
import { lazyCatalog } from "../../src/catalog/catalog";
import { defineTool } from "../../src/catalog/define-tool";
import { catalogProblem } from "../../src/startup";
import { catalog } from "../../src/tools";

const lookup = defineTool({
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

describe("the start-up check of a catalog loaded on first use", () => {
  it("finds nothing wrong with the served catalog", () => {
    expect(catalogProblem(catalog)).toBeNull();
  });

  it("names the tool and the rule of a catalog that breaks one, at every request", () => {
    const broken = lazyCatalog(() => [{ ...lookup, timeout_ms: 0 }], undefined, "structure");
    for (let request = 0; request < 2; request++) {
      expect(catalogProblem(broken)).toBe(
        'the tool catalog breaks a rule: tool "lookup_widget": timeout_ms must be a number between 1 and 30000',
      );
    }
  });
});
