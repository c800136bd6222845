import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Envelope } from "../wire/envelope";

/**
 * One line a model can act on when its client shows only `content`: what happened, the shaped
 * data on success, and on failure the code, the problems and the next step. The full envelope
 * travels in `structuredContent`; this text never says more than the envelope does.
 */
function envelopeText(envelope: Envelope): string {
  const tool = envelope.tool ?? "The call";
  const { error } = envelope;
  const edited = editText(envelope);
  if (error === null) {
    const replay = envelope.replayed
      ? " (replayed: this exact call already ran in this run; nothing ran again)"
      : "";
    return `${tool} succeeded${replay}.${edited} Result: ${JSON.stringify(envelope.data)}`;
  }
  const problems = error.problems.map((problem) => `${problem.field}: ${problem.reason} (${problem.hint})`);
  return [
    `${tool} failed with ${error.code} (${envelope.outcome}). ${error.message}${edited}`,
    problems.length > 0 ? `Problems: ${problems.join("; ")}.` : "",
    `Next: ${error.recommended_next_action}.`,
  ]
    .filter((part) => part !== "")
    .join(" ");
}

/** What an operator changed before approving: the arguments asked for and the ones approved. */
function editText({ approval }: Envelope): string {
  const edit = approval?.edit;
  if (!edit) return "";
  const who = edit.by_name ?? "An operator";
  const changes = edit.fields.map(
    (field) =>
      `${field} ${JSON.stringify(edit.asked_args[field] ?? null)} → ${JSON.stringify(edit.approved_args[field] ?? null)}`,
  );
  const what = approval.state === "pending" ? "will run once approved" : "are the ones that count";
  return ` ${who} changed the arguments before approving (${changes.join(", ")}): the approved arguments ${what}, not the ones you asked for, which never run.`;
}

/**
 * The MCP face of an envelope. A tool's failure is a result the model reads (`isError: true`),
 * never a JSON-RPC error: those are for protocol breaks, and a client may hide them from the model.
 */
export function toCallToolResult(envelope: Envelope): CallToolResult {
  return {
    content: [{ type: "text", text: envelopeText(envelope) }],
    structuredContent: envelope as unknown as Record<string, unknown>,
    isError: envelope.outcome !== "success",
  };
}
