import { EVAL_LANES, inLane, laneOf } from "../sandbox/src/seed-eval";
import type { EvalCase } from "./case-types";
import type { SandboxAdmin } from "./sandbox-admin";
import type { AdminRefund, AdminTicket } from "./source-types";

/**
 * Lanes of the evaluation's own data (sandbox/src/seed-eval.ts): each agent of an evaluation runs
 * every case on a lane of its own, the case's orders and customers under that lane's ids, so no two
 * runs of the evaluation, and no run of an earlier evaluation on the same sandbox, act on one order
 * or customer. A guard across runs then holds a case's write only when the case is about it.
 */

/** The case with every id of its own data moved into `lane` (lane 0 is the case as written). */
export function caseInLane(evalCase: EvalCase, lane: number): EvalCase {
  return mapStrings(evalCase, (text) => inLane(text, lane)) as EvalCase;
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === "string") return map(value);
  if (Array.isArray(value)) return value.map((inner) => mapStrings(inner, map));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, mapStrings(inner, map)]));
  }
  return value;
}

/** Rows a run wrote at the source: which lanes they name (seeded rows carry no run). */
export function usedLanes(refunds: readonly AdminRefund[], tickets: readonly AdminTicket[]): Set<number> {
  const used = new Set<number>();
  const note = (id: string) => {
    const lane = laneOf(id);
    if (lane !== null) used.add(lane);
  };
  for (const refund of refunds) if (refund.run_id !== null) note(refund.order_id);
  for (const ticket of tickets) if (ticket.run_id !== null) note(ticket.customer_id);
  return used;
}

/**
 * `count` lanes no run has written to on this sandbox, lowest first. A stack the evaluation started
 * is fresh, so its agents take lanes 0, 1, …; a running `npm start` keeps what earlier evaluations
 * wrote, and the proxy remembers their effects for a day, so those lanes are passed over.
 */
export async function freeLanes(admin: SandboxAdmin, count: number): Promise<number[]> {
  const read = async (tenant: string) => {
    const [refunds, tickets] = await Promise.all([
      admin.get<{ refunds: AdminRefund[] }>(`/_admin/refunds?tenant=${tenant}`),
      admin.get<{ tickets: AdminTicket[] }>(`/_admin/tickets?tenant=${tenant}`),
    ]);
    return usedLanes(refunds.refunds, tickets.tickets);
  };
  const used = new Set([...(await read("acme")), ...(await read("globex"))]);
  const free = Array.from({ length: EVAL_LANES }, (_, lane) => lane).filter((lane) => !used.has(lane));
  if (free.length < count) {
    throw new Error(
      `the sandbox has ${free.length} of its ${EVAL_LANES} lanes of evaluation data unused, and ${count} agent(s) need one each: ` +
        "earlier evaluations wrote to the others, and the proxy holds their effects for a day. Restart the stack (`npm start`) for fresh state, or evaluate fewer agents",
    );
  }
  return free.slice(0, count);
}
