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
  if (error === null) {
    const replay = envelope.replayed
      ? " (replayed: this exact call already ran in this run; nothing ran again)"
      : "";
    return `${tool} succeeded${replay}. Result: ${JSON.stringify(envelope.data)}`;
  }
  const problems = error.problems.map((problem) => `${problem.field}: ${problem.reason} (${problem.hint})`);
  return [
    `${tool} failed with ${error.code} (${envelope.outcome}). ${error.message}`,
    problems.length > 0 ? `Problems: ${problems.join("; ")}.` : "",
    `Next: ${error.recommended_next_action}.`,
  ]
    .filter((part) => part !== "")
    .join(" ");
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
