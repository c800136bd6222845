import type { AdminRefund, AdminRequest } from "../eval/source-types";
import type { Envelope } from "../src/wire/envelope";

/** The transcript's voice: numbered steps, envelopes in one or two lines, the sandbox's rows as a table. */

let step = 0;

export function heading(text: string): void {
  console.log(`\n${text}\n${"=".repeat(text.length)}`);
}

export function say(text: string): void {
  step++;
  console.log(`\n${String(step).padStart(2)}. ${text}`);
}

export function note(text: string): void {
  console.log(`    ${text}`);
}

const short = (key: string | null) => (key ? `${key.slice(0, 12)}…` : "none");

/** The parts of an envelope an agent acts on, on two lines. */
export function showEnvelope(envelope: Envelope, httpStatus?: number): void {
  const status = httpStatus === undefined ? "" : `HTTP ${httpStatus}  `;
  const error = envelope.error;
  if (!error) {
    const replay = envelope.replayed ? "  replayed: true (served from the ledger, upstream untouched)" : "";
    note(`← ${status}success${replay}`);
  } else {
    const effect = error.side_effect_confirmed === null ? "unknown" : String(error.side_effect_confirmed);
    note(
      `← ${status}${envelope.outcome}  ${error.code}  side_effect_confirmed: ${effect}  next: ${error.recommended_next_action}`,
    );
    note(`  "${error.message}"`);
  }
  const budget = envelope.budget;
  const parts = [
    envelope.idempotency_key ? `idempotency_key ${short(envelope.idempotency_key)}` : "",
    budget ? `calls left ${budget.calls_left}, destructive left ${budget.destructive_left}` : "",
  ].filter((part) => part !== "");
  if (parts.length > 0) note(`  ${parts.join("  ")}`);
}

export function showRefunds(refunds: readonly AdminRefund[]): void {
  note(`refund rows in the payments sandbox for this run: ${refunds.length}`);
  for (const refund of refunds) {
    note(
      `  ${refund.refund_id}  ${refund.order_id}  ${refund.amount_cents} cents  ${refund.reason}  ${refund.created_at}`,
    );
  }
}

export function showRequests(requests: readonly AdminRequest[], path: string): void {
  const mine = requests.filter((request) => request.path === path);
  note(`POST ${path} requests the sandbox received: ${mine.length}`);
  for (const request of mine) {
    const fault = request.fault ? `fault=${request.fault}` : "no fault";
    note(
      `  #${request.seq}  ${request.method} ${request.path}  ${request.status ?? "-"}  ${fault.padEnd(17)} Idempotency-Key ${short(request.idempotency_key)}`,
    );
  }
}
