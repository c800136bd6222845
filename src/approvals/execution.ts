import type { ApprovalExecution, ApprovalState, Envelope, ErrorCode } from "../wire/envelope";

/**
 * What an approval's call did, told apart from the approval's state (src/wire/approval.ts): an
 * approval reaches `executed` once its call's outcome is known, whatever that outcome was, so the
 * state alone cannot tell a refund made from one the upstream refused or one never sent.
 */

/** Refusals the proxy itself makes at dispatch, before the request leaves: the call was not sent. */
const REFUSED_BEFORE_SENDING: ReadonlySet<ErrorCode> = new Set<ErrorCode>(["upstream_changed"]);

/**
 * What a settled call did, from its answer as folded with its key's history (`certainty.ts`) and
 * the state that left its key in. A key left in doubt is in doubt, whatever the answer says. A
 * success, or a failure that says the effect happened (`side_effect_confirmed: true`, as a partial
 * success), executed; a failure known not to have acted was not sent when the proxy refused it
 * before it left, and refused when the upstream did; one of unknown effect is in doubt.
 */
export function executionOf(
  envelope: Envelope,
  key: "completed" | "in_doubt" = "completed",
): ApprovalExecution {
  if (key === "in_doubt") return "in_doubt";
  const { error } = envelope;
  if (envelope.outcome === "success" || error === null) return "executed";
  if (error.side_effect_confirmed === true) return "executed";
  if (error.side_effect_confirmed === null) return "in_doubt";
  return REFUSED_BEFORE_SENDING.has(error.code) ? "not_sent" : "refused";
}

/**
 * What an approval's call did when its record holds no execution: a rejected or expired one never
 * sent its call; one that settled before executions were recorded is read from its result; a
 * pending one, or an approved one whose call is on its way, did nothing yet.
 */
export function executionOfState(state: ApprovalState, result: Envelope | null): ApprovalExecution | null {
  switch (state) {
    case "rejected":
    case "expired":
      return "not_sent";
    case "executed":
      return result ? executionOf(result) : null;
    case "pending":
    case "approved":
      return null;
  }
}

/** An approval whose call did not act as approved: refused, not sent after approval, or in doubt. */
export function didNotExecute(approval: {
  state: ApprovalState;
  execution: ApprovalExecution | null;
}): approval is { state: "approved" | "executed"; execution: Exclude<ApprovalExecution, "executed"> } {
  if (approval.state !== "approved" && approval.state !== "executed") return false;
  return approval.execution !== null && approval.execution !== "executed";
}
