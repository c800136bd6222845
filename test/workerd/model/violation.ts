import type { Envelope } from "../../../src/wire/envelope";

/**
 * The run guarantees the model-based test checks (docs/guarantees.md, "What a run guarantees", and
 * docs/human-gate.md), numbered as its failures name them:
 *
 * 1. At most one upstream effect per idempotency key; every attempt under a key sends the same bytes,
 *    so a call that passed validation is never answered with a validation_error later.
 * 2. Counters never exceed the run's limits.
 * 3. No dead ends: `approval_required` only names an approval that can still execute; one that no
 *    longer can is expired with its reason; nothing executes after the run's deadline or end.
 * 4. A replay has the outcome and data of the first completed answer.
 * 5. No envelope says `side_effect_confirmed: false` for an effect the upstream holds (certainty only
 *    moves up: not after a 429 or a 4xx on the resend of a key whose first attempt acted, nor after
 *    a truncated success); a refusal of a completed key carries its stored outcome.
 * 6. `__proto__`, `constructor` and `prototype` are refused as argument names, naming the field.
 * 7. An upstream credential expires within its tool's timeout plus 2 s; none after the run ends.
 * 8. Derived views converge: once quiet (directories up, the ledgers' alarms rung), the operators'
 *    lists of approvals and runs equal what the runs' ledgers hold, whatever failed or restarted
 *    between a ledger's commit and its delivery.
 * 9. No silent duplicate across runs: a second run's effect on the same identity (tenant, tool,
 *    identity arguments) within the tool's window goes ahead only once an operator approved it,
 *    confirming the earlier effect its approval listed, unless the tenant lets the tool repeat.
 * 10. Caps are reserved, not checked: the refunds no operator approved add up to no more than the
 *    tenant's daily cap (counting what other runs moved today), a subject's daily cap, or within
 *    one run the per-run cap, however the runs interleave, fail or restart.
 * 11. Two people: an approval the tenant gives to two people (acme's refunds over two_person_above)
 *    reaches the upstream only once two different people approved it (one person's two keys count
 *    once), whatever races, restarts and expiries came between.
 * 12. An edited approval executes exactly one call, the edited one: once an operator approved other
 *    arguments, the call as asked never reaches the upstream, whatever the agent resends.
 * 13. The audit log is the ledgers' record: once quiet, each tenant's chain verifies whole with the
 *    published keys, holds each receipt once, and holds exactly one receipt of each approval decision
 *    and exactly one `made` receipt of each write a run's ledger holds as done, and no other,
 *    whatever restarted between a decision's commit and its delivery (docs/audit.md).
 * 14. An approval executes only under the policy it was asked under: once a deploy changed its tool's
 *    contract while it was pending, it is never approved, never executed and never waited for, and
 *    a change to any other tool, namespace or tenant leaves the runs' calls and approvals as they were.
 *
 * A failure names its rule and shows the answer that broke it, so a shrunk counterexample reads as
 * "this sequence of commands breaks rule N, and here is the answer that did it".
 */

export class ContractViolation extends Error {
  override name = "ContractViolation";
}

export function violated(rule: string, message: string, evidence?: unknown): never {
  const detail = evidence === undefined ? "" : `\n  evidence: ${JSON.stringify(evidence).slice(0, 1_500)}`;
  throw new ContractViolation(`invariant ${rule}: ${message}${detail}`);
}

/** The parts of an answer the invariants are about, for the failure message. */
export function shown(answer: Envelope) {
  return {
    outcome: answer.outcome,
    code: answer.error?.code ?? null,
    replayed: answer.replayed,
    idempotency_key: answer.idempotency_key,
    side_effect_confirmed: answer.error?.side_effect_confirmed,
    external_id: answer.error?.external_id,
    details: answer.error?.details,
    approval: answer.approval,
    budget: answer.budget,
    observed_state: answer.observed_state,
    data: answer.data,
  };
}
