import { describe, expect, it } from "vitest";
import { heaviest, type ProfileNode } from "../../bench/profile.mjs";
import { sourceMapLookup } from "../../bench/source-map.mjs";

const frame = (functionName: string, where = "") => ({
  functionName,
  url: where,
  lineNumber: 0,
  columnNumber: 0,
});
/** Names a frame by its url, taken here as its place in the sources. */
const name = ({ functionName, url }: { functionName: string; url: string }) => ({
  name: functionName,
  where: url,
});

describe("the bench's CPU profile", () => {
  // root → handle (src/a.ts) → sign (native); root → (idle)
  const nodes: ProfileNode[] = [
    { id: 1, callFrame: frame("(root)"), children: [2, 4] },
    { id: 2, callFrame: frame("handle", "src/a.ts:3"), children: [3] },
    { id: 3, callFrame: frame("sign") },
    { id: 4, callFrame: frame("(idle)") },
  ];

  it("ranks functions by self time and the project's by total time, waits and idle left out", () => {
    // Sample i ran for timeDeltas[i + 1], at most 200 µs: the 5,000 µs after the third is a wait.
    const profile = { nodes, samples: [2, 3, 3, 4, 2], timeDeltas: [0, 50, 50, 5_000, 50, 0] };
    const stage = heaviest(profile, 2, name);
    // handle 50 µs, sign 50 + 200 µs; the idle sample and the last (no interval after it) add nothing.
    expect(stage.busy_ms_per_call).toBeCloseTo(0.15);
    expect(stage.heaviest).toEqual([
      { function: "sign", ms_per_call: 0.125, share: 250 / 300 },
      { function: "handle src/a.ts:3", ms_per_call: 0.025, share: 50 / 300 },
    ]);
    // handle is on the stack of every busy sample; sign, not the project's, is not listed.
    expect(stage.heaviest_total).toEqual([{ function: "handle src/a.ts:3", ms_per_call: 0.15, share: 1 }]);
  });

  it("names a minified position by its source map: file, line and name", () => {
    // One generated line: column 0 → a.ts line 1, column 10 → b.ts line 3 named "run".
    const map = { mappings: "AAAA,UCEAA", sources: ["../src/a.ts", "../src/b.ts"], names: ["run"] };
    const lookup = sourceMapLookup(map, "/p/dist/index.js", "/p");
    expect(lookup(0, 4)).toEqual({ source: "src/a.ts", line: 1, name: null });
    expect(lookup(0, 12)).toEqual({ source: "src/b.ts", line: 3, name: "run" });
    expect(lookup(1, 0)).toBeNull();
  });
});
