import type { PreparedCall } from "./prepare";
import type { Taint } from "./run-state";

/**
 * Once a run has read third-party text, the model may be acting on someone else's instructions.
 * From then on every destructive call waits for a human, even one a policy would let through, and
 * the approval says which call brought the text in.
 */
export function withTaint(prepared: PreparedCall, taint: Taint | null): PreparedCall {
  if (!taint || prepared.tool?.side_effect !== "destructive" || !prepared.args) return prepared;
  const reason = `the run read untrusted content in call ${taint.call_id} (${taint.tool})`;
  const earlier = prepared.approval.required ? prepared.approval.reasons : [];
  return { ...prepared, approval: { required: true, reasons: [...earlier, reason] } };
}
