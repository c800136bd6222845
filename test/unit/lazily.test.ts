import { describe, expect, it } from "vitest";
import { lazily } from "../../src/core/lazily";

describe("a value built on first use", () => {
  it("is not built until asked, then built once and kept", () => {
    let builds = 0;
    const value = lazily(() => {
      builds += 1;
      return { built: builds };
    });
    expect(builds).toBe(0);
    const first = value();
    expect(value()).toBe(first);
    expect(builds).toBe(1);
  });

  it("keeps undefined as a built value", () => {
    let builds = 0;
    const value = lazily(() => {
      builds += 1;
      return undefined;
    });
    value();
    value();
    expect(builds).toBe(1);
  });

  it("builds again after a build that threw", () => {
    let builds = 0;
    const value = lazily(() => {
      builds += 1;
      if (builds === 1) throw new Error("not yet");
      return builds;
    });
    expect(() => value()).toThrow("not yet");
    expect(value()).toBe(2);
    expect(value()).toBe(2);
  });
});
