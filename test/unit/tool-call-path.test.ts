import { describe, expect, it } from "vitest";
import { isToolCall } from "../../src/http/tool-call-path";

const post = (url: string) => new Request(url, { method: "POST" });

describe("which requests are REST tool calls", () => {
  it("is a POST to a run's calls, whatever the origin, query or fragment", () => {
    for (const url of [
      "https://proxy.test/v1/runs/run_abc/calls",
      "http://127.0.0.1:8787/v1/runs/run_abc/calls?trace=1",
      "https://proxy.test/v1/runs/r%20x/calls#part",
    ]) {
      expect(isToolCall(post(url)), url).toBe(true);
    }
  });

  it("is nothing else: another method, path, a run id missing or of two segments, a trailing slash", () => {
    expect(isToolCall(new Request("https://proxy.test/v1/runs/run_abc/calls"))).toBe(false);
    for (const url of [
      "https://proxy.test/v1/runs",
      "https://proxy.test/v1/runs//calls",
      "https://proxy.test/v1/runs/a/b/calls",
      "https://proxy.test/v1/runs/run_abc/calls/",
      "https://proxy.test/v1/runs/run_abc/end",
      "https://proxy.test/mcp?next=/v1/runs/run_abc/calls",
      "https://proxy.test/x/v1/runs/run_abc/calls",
    ]) {
      expect(isToolCall(post(url)), url).toBe(false);
    }
  });
});
