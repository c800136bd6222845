import { runInDurableObject } from "cloudflare:test";
import type { PresentedCredential } from "../../../sandbox/src/model";
import type { Envelope } from "../../../src/wire/envelope";
import { ledgerStubOf } from "../helpers";
import { checkAcrossRuns } from "./across-runs";
import { directoryRefusesWrites } from "./derived-views";
import {
  type AgentCall,
  argsSigOf,
  canonical,
  effectBudgetSpent,
  type RunModel,
  SIDE_EFFECT,
  timeoutOf,
} from "./reference";
import {
  type ApprovalView,
  approvalOf,
  credentialClaims,
  type Effect,
  effectsOf,
  pendingApprovalIds,
  presentedCredentialsOf,
  runStatusOf,
  upstreamRequestsOf,
} from "./system";
import { shown, violated } from "./violation";

/** One agent call's answers, for the checks that need the sandbox's records. */
export interface Answered {
  run: RunModel;
  call: AgentCall;
  answers: readonly Envelope[];
}

/**
 * After every command, for each run it touched: counters within limits (rule 2), at most one
 * effect per key and none the model never asked for (rule 1), no "no effect" claim the sandbox
 * contradicts (rule 5), nothing upstream after the run closed (rule 3), every pending approval
 * still executable while every other one is off the pending list (rule 3), and every credential the
 * upstream saw short-lived and none presented after the run closed (rule 7). Then, for the tenants
 * of those runs, what every run of the tenant did together (rules 9 and 10, ./across-runs.ts).
 */
export async function checkWorld(runs: readonly RunModel[], answered: readonly Answered[]): Promise<void> {
  for (const run of runs) {
    const [status, effects, requests, credentials] = await Promise.all([
      runStatusOf(run.handle),
      effectsOf(run.handle),
      upstreamRequestsOf(run.handle),
      presentedCredentialsOf(run.handle),
    ]);
    checkCounters(run, status.counters);
    run.counters = status.counters;
    checkEffects(run, effects);
    for (const entry of answered.filter((a) => a.run === run)) checkNoFalseDenial(entry, effects);
    if (run.frozenRequests !== null && requests.length !== run.frozenRequests) {
      violated(
        "3",
        `the upstream saw requests of a run that is ${run.lifecycle}`,
        requests.slice(run.frozenRequests),
      );
    }
    checkCredentials(run, credentials);
    await checkApprovals(run, answered);
  }
  await checkAcrossRuns(runs.map((run) => run.tenant));
}

/**
 * Rule 7: a credential names this run and its tool and dies within the tool's timeout + 2 s of being
 * issued. Issuing comes before presenting, so `presented_at` bounds the issue time from above.
 */
function checkCredentials(run: RunModel, credentials: readonly PresentedCredential[]): void {
  for (const entry of credentials) {
    const claims = credentialClaims(entry.credential);
    if (
      !claims ||
      claims.tenant !== run.tenant ||
      claims.run !== run.handle.id ||
      claims.tool !== entry.tool
    ) {
      violated("7", `the upstream was shown a credential for another run or tool`, { ...entry, claims });
    }
    const timeout = timeoutOf(entry.tool);
    const lifetime = claims.exp - Date.parse(entry.presented_at);
    if (timeout !== null && lifetime > timeout + 2_000) {
      violated("7", `a ${entry.tool} credential lives ${lifetime} ms after it was presented`, claims);
    }
  }
  if (run.frozenCredentials !== null && canonical(credentials) !== run.frozenCredentials) {
    violated("7", `a credential was presented after the run became ${run.lifecycle}`, credentials);
  }
}

function checkCounters(run: RunModel, counters: RunModel["counters"]): void {
  const { limits } = run;
  if (
    counters.calls_used > limits.max_calls ||
    counters.writes_used > limits.max_writes ||
    counters.destructive_used > limits.max_destructive
  ) {
    violated("2", "a counter is above its limit", { counters, limits });
  }
  for (const name of ["calls_used", "writes_used", "destructive_used"] as const) {
    if (counters[name] < run.counters[name])
      violated("2", `${name} went down`, { before: run.counters, counters });
  }
}

function checkEffects(run: RunModel, effects: readonly Effect[]): void {
  const perCall = new Map<string, Effect[]>();
  for (const effect of effects) perCall.set(effect.argsSig, [...(perCall.get(effect.argsSig) ?? []), effect]);
  for (const [argsSig, rows] of perCall) {
    // A call an operator edited stands for its edited arguments, never for the ones asked (rule 12).
    const all = [...run.keys.values()];
    const edited = all.filter((key) => key.argsSig === argsSig && key.editedArgsSig !== undefined);
    const keys =
      all.filter((key) => key.argsSig === argsSig && key.editedArgsSig === undefined).length +
      all.filter((key) => key.editedArgsSig === argsSig).length;
    if (keys === 0 && edited.length > 0)
      violated("12", `an edited approval's call as asked reached the upstream: ${argsSig}`, rows);
    if (keys === 0)
      violated("1", `the upstream holds an effect no call of this run asked for: ${argsSig}`, rows);
    if (rows.length > keys) {
      violated("1", `${rows.length} effects for ${argsSig}, which was called under ${keys} key(s)`, rows);
    }
  }
  const refunds = effects.filter((effect) => effect.tool === "issue_refund").length;
  const tickets = effects.filter((effect) => effect.tool === "create_internal_ticket").length;
  if (refunds > run.limits.max_destructive || tickets > run.limits.max_writes) {
    violated("2", "the upstream holds more effects than the run's budget allows", {
      refunds,
      tickets,
      limits: run.limits,
    });
  }
}

/**
 * Rule 5: `side_effect_confirmed: false` is a promise that the key left nothing behind. Effects
 * carry no key, so they are matched by arguments: with k keys sharing the arguments (intents),
 * more than k - 1 effects means this key holds one, as no key may hold two (rule 1).
 */
function checkNoFalseDenial(entry: Answered, effects: readonly Effect[]): void {
  if (SIDE_EFFECT[entry.call.tool] === "read") return;
  const argsSig = argsSigOf(entry.call.tool, entry.call.args);
  const sharing = [...entry.run.keys.values()].filter((key) => key.argsSig === argsSig).length;
  const held = effects.filter((effect) => effect.argsSig === argsSig).length;
  if (held <= sharing - 1) return;
  for (const answer of entry.answers) {
    if (answer.error?.side_effect_confirmed === false) {
      violated(
        "5",
        `side_effect_confirmed is false, but the sandbox holds the effect of this ${entry.call.tool}`,
        shown(answer),
      );
    }
  }
}

async function checkApprovals(run: RunModel, answered: readonly Answered[]): Promise<void> {
  if (run.approvals.size === 0) return;
  const waitedOn = new Set(
    answered
      .filter((a) => a.run === run)
      .flatMap((a) => a.answers)
      .filter((answer) => answer.error?.code === "approval_required")
      .map((answer) => answer.approval?.id),
  );
  // While the tenant's directory is down, an approval asked for meanwhile is unknown to the
  // operators' API, and its list lags behind: the ledger is asked instead, and rule 8 holds the
  // list to it once the directory is back.
  const directoryDown = directoryRefusesWrites(run.tenant);
  const notPending: string[] = [];
  for (const approval of run.approvals.values()) {
    const view = directoryDown
      ? await ledgerApprovalOf(run, approval.id)
      : await approvalOf(run.tenant, approval.id);
    approval.state = view.state;
    if (approval.voided && (view.state === "approved" || view.state === "executed")) {
      violated("14", `approval ${approval.id} was ${view.state} after its tool's change voided it`, view);
    }
    if (view.state === "pending") {
      if (run.lifecycle !== "open" || effectBudgetSpent(run, approval.tool)) {
        violated("3", `approval ${approval.id} is still pending though it can no longer execute`, {
          lifecycle: run.lifecycle,
          counters: run.counters,
          limits: run.limits,
          call: approval.keySig,
        });
      }
      continue;
    }
    notPending.push(approval.id);
    if (waitedOn.has(approval.id)) {
      violated("3", `an agent was told to wait on approval ${approval.id}, which is ${view.state}`, view);
    }
    if (view.state === "expired" && !view.decision_reason) {
      violated("3", `approval ${approval.id} expired without a decision_reason saying why`, view);
    }
  }
  if (notPending.length === 0 || directoryDown) return;
  const pending = await pendingApprovalIds(run.tenant);
  for (const id of notPending) {
    if (pending.has(id)) violated("3", `approval ${id} is no longer pending but still listed as pending`);
  }
}

/** An approval as its run's ledger holds it, without the directory that locates it for operators. */
async function ledgerApprovalOf(run: RunModel, approvalId: string): Promise<ApprovalView> {
  const record = await runInDurableObject(
    ledgerStubOf(run.handle),
    (_instance, state) =>
      state.storage.sql
        .exec<{ state: string; decision_reason: string | null }>(
          "SELECT state, decision_reason FROM approvals WHERE id = ?",
          approvalId,
        )
        .toArray()[0],
  );
  if (!record) throw new Error(`approval ${approvalId} is not in its run's ledger`);
  return { state: record.state, decision_reason: record.decision_reason };
}
