import { describe, expect, it } from "vitest";
import { completionRequest, openAiConfigFromEnv, temperatureFromEnv } from "../../agents/openai-compatible";

/** The OpenAI-compatible agent samples at temperature 0 unless told otherwise. */

const ENV = { OPENAI_BASE_URL: "http://127.0.0.1:11434/v1", OPENAI_API_KEY: "k", OPENAI_MODEL: "m" };

describe("the OpenAI-compatible agent's temperature", () => {
  it("is 0 when OPENAI_TEMPERATURE is unset or empty, and the request carries it", () => {
    expect(openAiConfigFromEnv(ENV)?.temperature).toBe(0);
    expect(temperatureFromEnv("")).toBe(0);
    expect(completionRequest({ model: "m" }, [], [])).toMatchObject({ model: "m", temperature: 0 });
  });

  it("takes a number from 0 to 2 from OPENAI_TEMPERATURE", () => {
    expect(openAiConfigFromEnv({ ...ENV, OPENAI_TEMPERATURE: "0.7" })?.temperature).toBe(0.7);
    expect(temperatureFromEnv("2")).toBe(2);
    expect(completionRequest({ model: "m", temperature: 0.7 }, [], []).temperature).toBe(0.7);
  });

  it("sends no temperature at all when set to omit", () => {
    const config = openAiConfigFromEnv({ ...ENV, OPENAI_TEMPERATURE: "omit" });
    expect(config?.temperature).toBeNull();
    expect(completionRequest({ model: "m", temperature: null }, [], [])).not.toHaveProperty("temperature");
  });

  it.each(["-1", "2.5", "hot", "1e1", "0x1", "NaN"])(
    "refuses OPENAI_TEMPERATURE=%s, naming the variable and what it allows",
    (value) => {
      expect(() => openAiConfigFromEnv({ ...ENV, OPENAI_TEMPERATURE: value })).toThrow(
        /OPENAI_TEMPERATURE is ".*": it must be a number from 0 to 2 .* or "omit"/,
      );
    },
  );
});
