import type { ToolSpec } from "../catalog/define-tool";
import type { FailureSpec } from "../envelope";

export type Shaped = { ok: true; data: unknown } | { ok: false; failure: FailureSpec };

/**
 * Stage "shape": the tool's output schema is a whitelist. Fields it does not name are stripped
 * before the model sees them; an answer that does not fit the contract is not passed on at all.
 */
export function shapeOutput(tool: ToolSpec, body: unknown): Shaped {
  const parsed = tool.output.safeParse(body);
  if (parsed.success) return { ok: true, data: parsed.data };
  return {
    ok: false,
    failure: {
      code: "terminal_error",
      message:
        "The upstream answered success with a result that does not match this tool's output contract, so it was withheld.",
      side_effect_confirmed: tool.side_effect === "read" ? false : null,
      recommended_next_action: tool.side_effect === "read" ? "escalate_to_human" : "reconcile",
    },
  };
}
