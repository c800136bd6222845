import type { CallToolResult } from "@modelcontextprotocol/server";
import { deprecationNotice } from "../catalog/deprecation";
import type { ApprovalExecution, ApprovalState, Envelope } from "../wire/envelope";

/**
 * What a model reads when its client shows only `content` (many pass nothing else on): what
 * happened, the shaped data on success, and on failure the code, the problems and the next step;
 * a pending approval's id, expiry and when to call again; the budget left, on every answer; a
 * deprecated tool's notice first. The full envelope travels in `structuredContent`; this text never
 * says more than the envelope does.
 */
function envelopeText(envelope: Envelope): string {
  const text = answerText(envelope);
  const { deprecation } = envelope;
  return deprecation ? `${deprecationNotice(envelope.tool ?? "This tool", deprecation)} ${text}` : text;
}

function answerText(envelope: Envelope): string {
  const tool = envelope.tool ?? "The call";
  const { error } = envelope;
  const edited = editText(envelope);
  const budget = budgetText(envelope);
  if (error === null) {
    const replay = envelope.replayed
      ? " (replayed: this exact call already ran in this run; nothing ran again)"
      : "";
    return [
      `${tool} succeeded${replay}.${edited}`,
      approvalText(envelope, null),
      budget,
      `Result: ${JSON.stringify(envelope.data)}`,
    ]
      .filter((part) => part !== "")
      .join(" ");
  }
  const problems = error.problems.map((problem) => `${problem.field}: ${problem.reason} (${problem.hint})`);
  const approval = approvalText(envelope, error.retry_after_ms);
  const again =
    error.retry_after_ms !== null && approval === ""
      ? ` (call again in ${seconds(error.retry_after_ms)})`
      : "";
  return [
    `${tool} failed with ${error.code} (${envelope.outcome}). ${error.message}${edited}`,
    approval,
    problems.length > 0 ? `Problems: ${problems.join("; ")}.` : "",
    `Next: ${error.recommended_next_action}${again}.`,
    budget,
  ]
    .filter((part) => part !== "")
    .join(" ");
}

/**
 * Where the call's approval stands: a pending one names its id, its expiry and when to call again
 * (the envelope's retry hint) when calling again can help; a decided one only its id and state,
 * the message says the rest.
 */
function approvalText(envelope: Envelope, retryAfterMs: number | null): string {
  const { approval } = envelope;
  if (!approval) return "";
  if (approval.state === "pending") {
    const waiting = `Approval ${approval.id} is waiting for a human; it expires at ${approval.expires_at}`;
    // A refusal that is final (the run ended, a budget is spent) invites no second call.
    if (envelope.outcome !== "retryable_failure") return `${waiting}.`;
    const when = retryAfterMs !== null ? `in ${seconds(retryAfterMs)}` : "later";
    return `${waiting}; call again ${when} with the same arguments.`;
  }
  if (approval.execution) return grantedText(approval.id, approval.execution);
  return `Approval ${approval.id} ${DECIDED[approval.state]}.`;
}

/**
 * A granted approval's call as it truly went (the approval's `execution`): its state reaches
 * `executed` once the outcome is known, whatever it was, so the state alone would tell a model that
 * a refused or unsent call ran.
 */
const EXECUTED: Record<ApprovalExecution, string> = {
  executed: "was granted and the call executed",
  refused: "was granted, but the upstream refused the call: it did not take effect",
  not_sent: "was granted, but the call was not sent: nothing was done",
  in_doubt: "was granted, but whether the call took effect is unknown",
};

/** What a granted approval's call did, in a sentence: what a model and a task's status read. */
export function grantedText(approvalId: string, execution: ApprovalExecution): string {
  return `Approval ${approvalId} ${EXECUTED[execution]}.`;
}

/** A decided approval whose block says nothing of its call (an answer recorded before it did). */
const DECIDED: Record<Exclude<ApprovalState, "pending">, string> = {
  approved: "was granted",
  executed: "was granted and the call executed",
  rejected: "was rejected",
  expired: "expired",
};

/** The run's budget left, in words; nothing when the answer belongs to no run. */
function budgetText({ budget }: Envelope): string {
  if (!budget) return "";
  return `Budget left: ${count(budget.calls_left, "call")}, ${count(budget.writes_left, "write")}, ${count(budget.destructive_left, "destructive action")}, ${duration(budget.deadline_ms_left)} until the run's deadline.`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** A wait, rounded up to whole seconds so a model never calls early: `30 s`. */
function seconds(ms: number): string {
  return `${Math.ceil(ms / 1_000)} s`;
}

/** Time left, to the second, in its two largest units: `1 h 5 min`, `29 min 40 s`, `40 s`. */
function duration(ms: number): string {
  const total = Math.floor(ms / 1_000);
  const parts = [
    [Math.floor(total / 3_600), "h"],
    [Math.floor((total % 3_600) / 60), "min"],
    [total % 60, "s"],
  ] as const;
  const first = parts.findIndex(([value]) => value > 0);
  if (first === -1) return "0 s";
  return parts
    .slice(first, first + 2)
    .filter(([value]) => value > 0)
    .map(([value, unit]) => `${value} ${unit}`)
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
