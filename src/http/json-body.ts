import type * as z from "zod";
import type { InputSchema } from "../catalog/define-tool";
import type { Problem } from "../envelope";
import { validateArguments } from "../pipeline/validate";

/** Parses a JSON body against a strict schema, with the same field-level problems tool calls get. */
export function parseJsonBody<S extends InputSchema>(
  text: string,
  schema: S,
): { ok: true; value: z.infer<S> } | { ok: false; problems: Problem[] } {
  let body: unknown;
  try {
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return {
      ok: false,
      problems: [{ field: "body", reason: "not valid JSON", hint: "Send a JSON object." }],
    };
  }
  const result = validateArguments(schema, body);
  return result.ok ? { ok: true, value: result.args as z.infer<S> } : result;
}
