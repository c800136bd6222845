import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { ANSWER_BOUNDS, exceededIn } from "../../src/core/answer-bounds";
import { AnswerMeter, readBounded, UNSCANNED_BYTES } from "../../src/core/answer-meter";
import { type ResultKeeper, shapeResult } from "../../src/machine/shape";
import { capResult, MAX_WHOLE_ITEM_BYTES, type PageContent, utf8Length } from "../../src/shaping/cap";
import { catalog } from "../../src/tools";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);
const encoder = new TextEncoder();

/**
 * The meter's verdict on a text fed in chunks of `size` bytes, after padding that the format
 * ignores (whitespace before JSON, a comment line before events): a short answer is scanned only
 * once the answer passes UNSCANNED_BYTES, so the padding makes the scan see the whole text.
 */
function metered(text: string, contentType = "application/json", size = 4096) {
  const meter = new AnswerMeter(contentType);
  const padding =
    contentType === "text/event-stream" ? `:${" ".repeat(UNSCANNED_BYTES)}\n` : " ".repeat(UNSCANNED_BYTES);
  const bytes = encoder.encode(padding + text);
  for (let offset = 0; offset < bytes.length; offset += size) {
    const crossed = meter.feed(bytes.subarray(offset, offset + size));
    if (crossed) return crossed;
  }
  return null;
}

describe("the meter of an answer as it streams", () => {
  it("cuts at the first bound crossed: nesting, members, one string, bytes", () => {
    const depth = ANSWER_BOUNDS.depth;
    expect(metered(`${"[".repeat(depth)}${"]".repeat(depth)}`)).toBeNull();
    expect(metered(`${"[".repeat(depth + 1)}${"]".repeat(depth + 1)}`)).toEqual({
      bound: "depth",
      max: depth,
    });
    const items = (count: number) => `[${Array.from({ length: count }, () => "0").join(",")}]`;
    expect(metered(items(ANSWER_BOUNDS.items))).toBeNull();
    expect(metered(items(ANSWER_BOUNDS.items + 1))?.bound).toBe("items");
    // Members of objects count as array elements do; an empty container counts none.
    expect(metered(`{"a":{},"b":[],"c":{"d":1}}`)).toBeNull();
    expect(metered(`"${"x".repeat(ANSWER_BOUNDS.string)}"`)).toBeNull();
    expect(metered(`"${"x".repeat(ANSWER_BOUNDS.string + 1)}"`)?.bound).toBe("string");
    expect(metered(" ".repeat(ANSWER_BOUNDS.bytes + 1 - UNSCANNED_BYTES), "text/plain", 1 << 20)?.bound).toBe(
      "bytes",
    );
    expect(metered(" ".repeat(ANSWER_BOUNDS.bytes - UNSCANNED_BYTES), "text/plain", 1 << 20)).toBeNull();
  });

  it("reads brackets, commas and escaped quotes inside a string as text", () => {
    const inside = `"${'[{,\\"'.repeat(200)}"`;
    expect(metered(`{"a":${inside}}`, "application/json", 3)).toBeNull();
    expect(metered(`{"a":${inside}, "b": ${"[".repeat(65)}`, "application/json", 7)?.bound).toBe("depth");
  });

  it("scans the data lines of an event stream, never its comments or other fields", () => {
    const deep = `${"[".repeat(70)}${"]".repeat(70)}`;
    expect(metered(`: ${deep}\nevent: message\nid: 1\n\n`, "text/event-stream")).toBeNull();
    expect(metered(`event: message\ndata: ${deep}\n\n`, "text/event-stream", 5)?.bound).toBe("depth");
    // A data field split over lines is one JSON text, whatever the line ends.
    const split = `data: {"a":\r\ndata: "${"x".repeat(ANSWER_BOUNDS.string + 1)}"}\n\n`;
    expect(metered(split, "text/event-stream", 1000)?.bound).toBe("string");
  });

  it("agrees with the walk of the parsed value on any answer, in any chunking", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 1, max: 64 }), (value, size) => {
        const text = JSON.stringify(value);
        expect(metered(text, "application/json", size)).toEqual(exceededIn(JSON.parse(text)));
      }),
      plan({ seed: 41_001, numRuns: 200 }),
    );
  });

  it("cancels a body past its bound without reading the rest", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(encoder.encode("[".repeat(1024)));
      },
    });
    const read = await readBounded(new Response(body, { headers: { "content-type": "application/json" } }));
    expect(read).toEqual({ ok: false, exceeded: { bound: "depth", max: ANSWER_BOUNDS.depth } });
    // Read until the answer is long enough to be scanned, then cut within the chunk that crossed.
    expect(pulled).toBeLessThanOrEqual(UNSCANNED_BYTES / 1024 + 2);
  });

  it("leaves a short answer unscanned, for the walk of its parsed value to judge", () => {
    const deep = `${"[".repeat(ANSWER_BOUNDS.depth + 1)}${"]".repeat(ANSWER_BOUNDS.depth + 1)}`;
    expect(new AnswerMeter("application/json").feed(encoder.encode(deep))).toBeNull();
    expect(exceededIn(JSON.parse(deep))).toEqual({ bound: "depth", max: ANSWER_BOUNDS.depth });
  });
});

describe("the walk of a parsed answer", () => {
  it("finds a nesting a million deep without recursing", () => {
    let deep: unknown = [];
    for (let level = 0; level < 1_000_000; level++) deep = [deep];
    expect(exceededIn(deep)).toEqual({ bound: "depth", max: ANSWER_BOUNDS.depth });
  });
});

const keeper: ResultKeeper = {
  savePages: () => undefined,
  observeVersion: () => ({ stale: false, newest_seen: null, record: null }),
};

describe("shaping a wide answer", () => {
  it("fences 150,000 untrusted texts without overflowing the stack, and keeps a short taint text", async () => {
    const tool = catalog.find("helpdesk", "search_articles") as ToolSpec;
    const results = Array.from({ length: 75_000 }, (_, index) => ({
      article_id: `kb_${index}`,
      title: "A",
      snippet: "S",
    }));
    const shaped = await shapeResult(
      {
        callId: "call_wide",
        fenceMarker: "fence0000000",
        alreadyTainted: false,
        results: keeper,
        findTool: () => undefined,
        observe: () => Promise.reject(new Error("no postcondition")),
      },
      tool,
      { query: "x" },
      { results, total: results.length },
    );
    expect(shaped.taint?.text?.length).toBeLessThanOrEqual(500);
    expect((shaped.data as { summary: { total_items: number } }).summary.total_items).toBe(75_000);
  });
});

describe("pages of a list with an item larger than a page", () => {
  it("cut that item into text pieces that join back into it, every page far below a storage row", () => {
    const huge = { id: "big", parts: Array.from({ length: 50 }, (_, index) => `${index}`.repeat(100_000)) };
    const results = [{ id: "a" }, huge, { id: "b" }];
    const capped = capResult({ results }, 16 * 1024);
    if (capped.kind !== "paged") throw new Error("expected pages");
    for (const page of capped.pages) expect(utf8Length(page)).toBeLessThanOrEqual(4 * MAX_WHOLE_ITEM_BYTES);
    const pages = capped.pages.map((page) => JSON.parse(page) as PageContent);
    const pieces = pages.filter((page) => "item" in page);
    expect(pieces.length).toBeGreaterThan(100);
    expect(pieces.every((page) => "item" in page && page.item === 1)).toBe(true);
    expect(JSON.parse(pieces.map((page) => ("text" in page ? page.text : "")).join(""))).toEqual(huge);
    const whole = pages.flatMap((page) => ("items" in page ? page.items : []));
    expect(whole).toEqual([{ id: "a" }, { id: "b" }]);
  });
});
