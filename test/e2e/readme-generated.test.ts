import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalProxy, startProxy } from "../../scripts/local-proxy";
import { findRegions, lineDiff } from "../../scripts/readme/regions";
import { walkthroughRegions } from "../../scripts/readme/walkthrough";
import { root } from "./project-copy";

/**
 * The walk-through (docs/http-contract.md) shows what a fresh proxy answers: its sample answers are generated from
 * one (`npm run readme`), and this test sends the walk-through's requests to a freshly started
 * proxy and sandbox and compares. The fix for a failure is `npm run readme`, after reading the diff.
 */

describe("the walk-through's samples", () => {
  let proxy: LocalProxy | undefined;

  beforeAll(async () => {
    proxy = await startProxy();
  }, 120_000);

  afterAll(() => proxy?.stop());

  it("are what a fresh proxy answers to the walk-through's calls", async () => {
    const generated = await walkthroughRegions(proxy?.url ?? "");
    const regions = findRegions(root);
    expect([...generated.keys()]).toEqual(["walkthrough-lookup-order", "walkthrough-validation-error"]);
    for (const [name, body] of generated) {
      const region = regions.get(name);
      expect(region, `a generated region "${name}" in README.md or docs/`).toBeDefined();
      const diff = region && region.body !== body ? lineDiff(region.body, body) : "";
      expect(diff, `${region?.file}, region "${name}" differs; run \`npm run readme\``).toBe("");
    }
  });

  it("renders the same text for two runs: ids and the deadline left are normalised", async () => {
    const first = await walkthroughRegions(proxy?.url ?? "");
    const second = await walkthroughRegions(proxy?.url ?? "");
    expect(second).toEqual(first);
    expect(first.get("walkthrough-lookup-order")).toContain('"call_id":"call_…"');
    expect(first.get("walkthrough-lookup-order")).toContain('"deadline_ms_left":…}');
  });
});
