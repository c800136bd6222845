import { describe, expect, it } from "vitest";
import { lazyCatalog } from "../../src/catalog/catalog";
import { catalogProblem } from "../../src/startup";
import { catalog } from "../../src/tools";
import { widgetLookup as lookup } from "./support/widget-tool";

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
