/** The most an operator's reason may say; the operator API allows the same. */
export const MAX_REASON_CHARS = 500;

export type DecisionForm = { ok: true; reason: string | null } | { ok: false; message: string };

/**
 * The reason field of an approve or reject form. Approving may say why; rejecting must, because the
 * agent is told the reason and a bare "no" leaves it nothing to act on.
 */
export function parseDecisionForm(decision: "approve" | "reject", raw: unknown): DecisionForm {
  const reason = typeof raw === "string" ? raw.trim() : "";
  if (reason.length > MAX_REASON_CHARS) {
    return {
      ok: false,
      message: `The reason is ${reason.length} characters long; shorten it to at most ${MAX_REASON_CHARS}.`,
    };
  }
  if (decision === "reject" && reason === "") {
    return { ok: false, message: "A rejection needs a reason: the agent is told why its call was refused." };
  }
  return { ok: true, reason: reason === "" ? null : reason };
}
