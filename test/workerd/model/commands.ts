import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import type fc from "fast-check";
import { type Envelope, envelopeSchema } from "../../../src/wire/envelope";
import {
  ACME_OPERATORS,
  armFault,
  ledgerStubOf,
  OPERATOR_KEYS,
  restartDurableObject,
  storeRun,
} from "../helpers";
import { fleetOrdersFor, nameRun, spendFleetDayElsewhere } from "./across-runs";
import { callContext, checkAnswers } from "./answer-checks";
import { undoCatalogChanges } from "./catalog-commands";
import { directoryRefusesWrites, forgetRefusingDirectories, restoreEveryDirectory } from "./derived-views";
import {
  type AgentCall,
  type ApprovalModel,
  argsSigOf,
  canonical,
  type Door,
  effectBudgetSpent,
  type HeaderFault,
  type KeyModel,
  keySigOf,
  type Limits,
  learnFromAnswers,
  learnKeyState,
  newRunModel,
  openRunsOf,
  type ReferenceModel,
  type RunModel,
  type RunName,
  reorderKeys,
  resolveCall,
  runOf,
  type TenantName,
} from "./reference";
import {
  approvalOf,
  type Decision,
  decideAs,
  endRun,
  openModelRun,
  presentedCredentialsOf,
  restartEffectShards,
  runStatusOf,
  sendCall,
  sendRawCall,
  sleep,
  upstreamRequestsOf,
} from "./system";
import { violated } from "./violation";
import { checkWorld } from "./world-checks";

/**
 * The commands of the model-based test and the arbitraries that generate them. Each command acts
 * on the real worker, updates the reference model with what it learned, then checks the run's
 * invariants. `toString` is what a shrunk counterexample prints, so it reads like a script.
 */

export interface SequenceStats {
  sequences: number;
  commands: number;
  /** Sequences started, shrinks included: each gets hooli orders of its own. */
  sequencesOpened: number;
  /** How often the guarantees past one run were put to the test: holds for a duplicate or a cap, confirmed duplicates. */
  acrossRuns: Record<string, number>;
  /**
   * Rule 11 put to the test: refunds over acme's two-person threshold asked for and decided at once,
   * and approvals that needed two people and reached the upstream (however they were decided).
   */
  twoPerson: { decided: number; reachedUpstream: number };
  /** Rule 14 put to the test: deploys that changed nothing the runs use, ones that changed a tool they call, approvals those voided. */
  catalog: { unrelated: number; related: number; voided: number };
}

function count(stats: SequenceStats, event: string): void {
  stats.acrossRuns[event] = (stats.acrossRuns[event] ?? 0) + 1;
}

/** Counts the answers that held a call for another run's effect or for a cap, for the summary line. */
function countHolds(stats: SequenceStats, answers: readonly Envelope[]): void {
  for (const answer of answers) {
    if (answer.error?.code !== "approval_required" || answer.replayed) continue;
    const details = answer.error.details as { earlier_effects?: unknown[]; limit?: { cap?: string } } | null;
    if ((details?.earlier_effects?.length ?? 0) > 0) count(stats, "held as a duplicate");
    if (details?.limit?.cap) count(stats, `held for ${details.limit.cap}`);
  }
}

/** The real side of fc.asyncModelRun: the worker is global, so only the statistics travel. */
export interface RealWorld {
  stats: SequenceStats;
}

export type ModelCommand = fc.AsyncCommand<ReferenceModel, RealWorld>;

/** How a sequence starts: the limits of its first runs, and of the hooli runs it opens later. */
export interface SequenceStart {
  acme: Limits;
  globex: Limits;
  hooli: Limits;
  /** What other hooli runs already moved today, so the daily cap is in reach of a short sequence. */
  fleetDaySpent: number;
  slowFaults: number;
}

/** The start of every sequence: a fresh acme and globex run and two hooli runs, with small limits. */
export async function openSequence(
  start: SequenceStart,
  stats: SequenceStats,
): Promise<{ model: ReferenceModel; real: RealWorld }> {
  // A failed sequence may have left a directory refusing writes; the next one (a shrink) starts clean,
  // on the catalog and configuration the project started with.
  await restoreEveryDirectory();
  undoCatalogChanges();
  await spendFleetDayElsewhere(start.fleetDaySpent);
  const [acme, globex, hooli, hooli2] = await Promise.all([
    openModelRun("acme", start.acme),
    openModelRun("globex", start.globex),
    openModelRun("hooli", start.hooli),
    openModelRun("hooli", start.hooli),
  ]);
  const sequence = ++stats.sequencesOpened;
  const runs = {
    acme: newRunModel("acme", acme, start.acme),
    globex: newRunModel("globex", globex, start.globex),
    hooli: newRunModel("hooli", hooli, start.hooli),
    "hooli#2": newRunModel("hooli#2", hooli2, start.hooli),
  };
  for (const run of Object.values(runs)) nameRun(run.handle.id, run.name, sequence);
  return {
    model: {
      runs,
      sequence,
      fleetOrders: fleetOrdersFor(sequence),
      fleetLimits: start.hooli,
      slowFaultsLeft: start.slowFaults,
    },
    real: { stats },
  };
}

const isSlow = (fault: HeaderFault | null) => fault?.mode === "slow_success" || fault?.mode === "hang";

function showFault(fault: HeaderFault | null): string {
  if (!fault) return "";
  if ("hang_ms" in fault) return ` fault=${fault.mode}(${fault.hang_ms}ms)`;
  if ("retry_after_s" in fault) return ` fault=${fault.mode}(Retry-After: ${fault.retry_after_s})`;
  return ` fault=${fault.mode}`;
}

function showCall(call: AgentCall): string {
  const intent = call.intent === null ? "" : ` intent=${call.intent}`;
  return `${call.tool} ${JSON.stringify(call.args)}${intent}${showFault(call.fault)}`;
}

/** One agent call, or a burst of identical ones sent at once (through either door). */
export class AgentCallCommand implements ModelCommand {
  constructor(
    readonly call: AgentCall,
    readonly doors: readonly Door[],
  ) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.call.run] !== undefined && (!isSlow(this.call.fault) || model.slowFaultsLeft > 0);
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    if (isSlow(this.call.fault)) model.slowFaultsLeft--;
    await makeCall(model, world, resolveCall(model, this.call), this.doors);
  }

  toString(): string {
    const how = this.doors.length === 1 ? `call via ${this.doors[0]}` : `burst of ${this.doors.join("+")}`;
    return `${this.call.run}: ${how} ${showCall(this.call)}`;
  }
}

/** One call (or burst) in a run: sent, learned from, and held to every invariant. */
export async function makeCall(
  model: ReferenceModel,
  world: RealWorld,
  call: AgentCall,
  doors: readonly Door[],
): Promise<void> {
  const run = runOf(model, call.run);
  const ctx = callContext(run, call);
  const answers = await Promise.all(doors.map((door) => sendCall(run.handle, { ...call, door })));
  countHolds(world.stats, answers);
  learnFromAnswers(run, call, answers);
  await checkAnswers(ctx, answers);
  await checkWorld([run], [{ run, call, answers }]);
}

/**
 * The agent sends its last call in this run again, the way agents retry after any failure, through
 * a door of its choice and with the arguments' keys in another order. The resend may meet a fault of
 * its own: a 429, or a success whose body is cut off, on a key whose first attempt may have acted.
 */
export class ResendLastCallCommand implements ModelCommand {
  constructor(
    readonly runName: RunName,
    readonly door: Door,
    readonly keyOrder: number,
    readonly fault: HeaderFault | null = null,
  ) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.runName]?.lastCall != null;
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const run = runOf(model, this.runName);
    const last = run.lastCall;
    if (!last) throw new Error("check() admits a resend only after a call");
    const call = { ...last, args: reorderKeys(last.args, this.keyOrder), door: this.door, fault: this.fault };
    const ctx = callContext(run, call);
    const answers = [await sendCall(run.handle, call)];
    learnFromAnswers(run, call, answers);
    await checkAnswers(ctx, answers);
    await checkWorld([run], [{ run, call, answers }]);
  }

  toString(): string {
    return `${this.runName}: the agent resends its last call via ${this.door} (keys in order #${this.keyOrder})${showFault(this.fault)}`;
  }
}

/**
 * A call that is in flight upstream when every Durable Object restarts: the sandbox holds the
 * request (hang below the timeout) while the ledger dies under it.
 */
export class CallAcrossRestartCommand implements ModelCommand {
  constructor(readonly call: AgentCall) {}

  /** The hang costs real time like a slow fault, so it spends the same allowance. */
  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.call.run] !== undefined && model.slowFaultsLeft > 0;
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    model.slowFaultsLeft--;
    const call = resolveCall(model, this.call);
    const run = runOf(model, call.run);
    const ctx = callContext(run, call);
    const seen = (await upstreamRequestsOf(run.handle)).length;
    let settled = false;
    const pending = sendCall(run.handle, call).finally(() => {
      settled = true;
    });
    for (let poll = 0; poll < 40 && !settled; poll++) {
      if ((await upstreamRequestsOf(run.handle)).length > seen) break;
      await sleep(50);
    }
    if (!settled) {
      await abortAllDurableObjects();
      forgetRefusingDirectories();
    }
    const answers = [await pending];
    learnFromAnswers(run, call, answers);
    await checkAnswers(ctx, answers);
    await checkWorld(openRunsOf(model), [{ run, call, answers }]);
  }

  toString(): string {
    return `${this.call.run}: call ${showCall(this.call)}, restarting every Durable Object while it is upstream`;
  }
}

/**
 * A write whose first attempt acts but whose answer is lost (the upstream holds it past the tool's
 * timeout, or every Durable Object restarts while it is upstream), then the agent's identical resend
 * at once, which may meet a 429 or a truncated success of its own. Each half is an ordinary command;
 * together they are the shape "certainty only moves up" is about, too rare to leave to chance.
 */
export class LostAnswerResendCommand implements ModelCommand {
  readonly #first: ModelCommand;
  readonly #resend: ResendLastCallCommand;

  constructor(
    readonly call: AgentCall,
    readonly lostBy: "timeout" | "restart",
    resendDoor: Door,
    keyOrder: number,
    resendFault: HeaderFault | null,
  ) {
    this.#first =
      lostBy === "timeout" ? new AgentCallCommand(call, [call.door]) : new CallAcrossRestartCommand(call);
    this.#resend = new ResendLastCallCommand(call.run, resendDoor, keyOrder, resendFault);
  }

  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.call.run] !== undefined && model.slowFaultsLeft > 0;
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    await this.#first.run(model, world);
    await this.#resend.run(model, world);
  }

  toString(): string {
    return `${this.#first.toString()}; then ${this.#resend.toString().replace(/^\w+: /, "")}`;
  }
}

export type DecisionKind =
  | "approve"
  | "reject"
  | "two racing approves"
  | "approve with one person's two keys"
  | "approve by two operators"
  /** A refund's amount lowered before approving, then a second operator approves the edited call. */
  | "approve with edit";

interface Decider {
  key: string;
  person: string;
}

/**
 * Who decides, per tenant: acme's operators hold roles and its large refunds need two people
 * (wrangler.toml's `approvers`); Dana holds two keys, as while rotating one. The other tenants have
 * one operator each, who then plays every part.
 */
const DECIDERS: Record<TenantName, { first: Decider; samePerson: Decider; secondPerson: Decider }> = {
  acme: {
    first: { key: ACME_OPERATORS.dana, person: "Dana Reyes" },
    samePerson: { key: ACME_OPERATORS.dana_second_key, person: "Dana Reyes" },
    secondPerson: { key: ACME_OPERATORS.lee, person: "Lee Park" },
  },
  globex: {
    first: { key: OPERATOR_KEYS.globex, person: "Sam Okafor" },
    samePerson: { key: OPERATOR_KEYS.globex, person: "Sam Okafor" },
    secondPerson: { key: OPERATOR_KEYS.globex, person: "Sam Okafor" },
  },
  hooli: {
    first: { key: OPERATOR_KEYS.hooli, person: "Fleet Ops" },
    samePerson: { key: OPERATOR_KEYS.hooli, person: "Fleet Ops" },
    secondPerson: { key: OPERATOR_KEYS.hooli, person: "Fleet Ops" },
  },
};

/** The decisions a kind makes, in order; racing ones are sent at once. */
function decisionsOf(
  tenant: TenantName,
  kind: DecisionKind,
): { racing: boolean; steps: Array<{ verb: "approve" | "reject"; by: Decider; edits?: boolean }> } {
  const { first, samePerson, secondPerson } = DECIDERS[tenant];
  switch (kind) {
    case "approve with edit":
      // The second operator sends the same edited arguments: for them it is a plain approval.
      return {
        racing: false,
        steps: [
          { verb: "approve", by: first, edits: true },
          { verb: "approve", by: secondPerson, edits: true },
        ],
      };
    case "approve":
    case "reject":
      return { racing: false, steps: [{ verb: kind, by: first }] };
    case "two racing approves":
      return {
        racing: true,
        steps: [
          { verb: "approve", by: first },
          { verb: "approve", by: first },
        ],
      };
    case "approve with one person's two keys":
      return {
        racing: false,
        steps: [
          { verb: "approve", by: first },
          { verb: "approve", by: samePerson },
        ],
      };
    case "approve by two operators":
      return {
        racing: false,
        steps: [
          { verb: "approve", by: first },
          { verb: "approve", by: secondPerson },
        ],
      };
  }
}

/**
 * An operator's decision on one of the run's approvals (picked by index among those seen). The run's
 * ledger may restart right after it answers: between its commit and a delivery to a directory that
 * is down, what the directory is owed must survive in the ledger.
 */
export class DecideCommand implements ModelCommand {
  constructor(
    readonly runName: RunName,
    readonly pick: number,
    readonly kind: DecisionKind,
    readonly confirms: boolean,
    readonly restartsAfter = false,
  ) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return (model.runs[this.runName]?.approvals.size ?? 0) > 0;
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const run = runOf(model, this.runName);
    const approvals = [...run.approvals.values()];
    const approval = approvals[this.pick % approvals.length];
    const key = approval && run.keys.get(approval.keySig);
    if (!approval || !key) throw new Error("check() admits a decision only once an approval was seen");
    const wasExpired = approval.state === "expired";
    const approvedBefore = new Set(approval.approvedBy);
    const voided = approval.voided === true;
    const executable =
      run.lifecycle === "open" &&
      approval.state === "pending" &&
      !voided &&
      !effectBudgetSpent(run, approval.tool);
    const seen = (await upstreamRequestsOf(run.handle)).length;
    // After an I/O, so every decision made before this one carries an earlier time.
    const decisionStarted = Date.now();
    const { racing, steps } = decisionsOf(run.tenant, this.kind);
    const verbs = steps.map(({ verb }) => verb);
    // An edit lowers a refund by 7 cents: an amount no generated call asks for, so the edited
    // arguments are no other call's.
    const amount = Number(key.args.amount_cents);
    const editArgs =
      key.tool === "issue_refund" && amount > 7 ? { ...key.args, amount_cents: amount - 7 } : undefined;
    const decide = ({ verb, by, edits }: (typeof steps)[number]) =>
      decideAs(run.tenant, approval.id, verb, this.confirms, by.key, edits ? editArgs : undefined);
    const decisions: Decision[] = [];
    if (racing) decisions.push(...(await Promise.all(steps.map(decide))));
    else for (const step of steps) decisions.push(await decide(step));
    steps.forEach((step, index) => {
      const { status } = decisions[index] as Decision;
      // A refusal (4xx) recorded nothing; any other answer may have recorded the approver.
      if (step.verb === "approve" && (status < 400 || status >= 500)) approval.approvedBy.add(step.by.person);
    });
    for (const decision of decisions) learnFromDecision(key, approval, decision);
    learnEdit(key, decisions, world);
    // Rule 14: an approval its tool's change voided is refused, whoever decides, and sends nothing.
    if (voided) {
      const granted = decisions.find(({ status }) => status === 200);
      if (granted)
        violated("14", `approval ${approval.id} was decided after its tool's change voided it`, granted);
      if ((await upstreamRequestsOf(run.handle)).length > seen) {
        violated("14", `approval ${approval.id} reached the upstream after its tool's change voided it`);
      }
    }
    // Rule 11: an approval that needs two people reaches the upstream only once two different
    // people approved it, whatever keys, races, restarts and expiries came between.
    if ((await upstreamRequestsOf(run.handle)).length > seen) {
      const required = (await approvalOf(run.tenant, approval.id)).approvals_required;
      if (required === undefined) throw new Error("the approvals API names how many must approve");
      if (approval.approvedBy.size < required) {
        violated(
          "11",
          `approval ${approval.id} needs ${required} approvers and executed after ${[...approval.approvedBy].join(" and ") || "nobody"}`,
        );
      }
      if (required > 1) world.stats.twoPerson.reachedUpstream++;
    }
    if (this.restartsAfter) await restartDurableObject(ledgerStubOf(run.handle));
    // Operators find an approval through the directory: one asked for while it was down is not
    // found until the ledger's outbox has delivered it (rule 8 checks that it is, once it is back).
    if (directoryRefusesWrites(run.tenant) && decisions.some(({ status }) => status === 404)) {
      await checkWorld([run], []);
      return;
    }
    // An approval refused for its unconfirmed duplicates in other runs executes nothing and stays
    // as it was; only an operator's confirmation may do the same thing again.
    const unconfirmed = decisions.filter(
      ({ status, envelope }) =>
        status === 409 &&
        (envelope.error?.details as { reason?: string } | null)?.reason === "duplicate_unconfirmed",
    );
    // Rule 9: an approval that listed another run's effect on the same thing executes only once
    // the operator confirms the duplicate.
    // Approving what was approved before is answered 200 and does nothing: it is no such approval.
    if (verbs[0] === "approve" && approval.earlierEffects > 0) {
      const approved = decisions.find(
        (decision) => decision.status === 200 && !repeatsEarlierApproval(decision, decisionStarted),
      );
      if (approved && this.confirms) count(world.stats, "approved as a confirmed duplicate");
      else if (approved) {
        violated(
          "9",
          `approval ${approval.id} listed ${approval.earlierEffects} effect(s) of other runs and was approved without confirm_duplicate`,
          approved.envelope.data,
        );
      }
    }
    if (unconfirmed.length > 0) {
      if (this.confirms) violated("3", "a confirmed approval was refused as an unconfirmed duplicate");
      if (unconfirmed.length === decisions.length) {
        const now = (await upstreamRequestsOf(run.handle)).length;
        if (now !== seen) violated("3", "an unconfirmed duplicate reached the upstream");
        const state = (await approvalOf(run.tenant, approval.id)).state;
        if (state !== "pending") violated("3", `an unconfirmed duplicate left its approval ${state}`);
      }
    }

    if (verbs[0] === "approve" && wasExpired) {
      // Rule 3: an approval that can no longer execute answers 409 and executes nothing.
      for (const { status, envelope } of decisions) {
        if (status !== 409 || envelope.error?.code !== "conflict_error") {
          violated("3", `approving an expired approval answered ${status}`, envelope.error);
        }
      }
      const now = (await upstreamRequestsOf(run.handle)).length;
      if (now !== seen) violated("3", "approving an expired approval reached the upstream");
    }
    // Under the two-person rule a person who already approved is refused again (409): the approval
    // stays pending for a second person, so that refusal is no dead end.
    // An edit that would exceed a cap the asked call did not is refused; the approval still waits.
    const editOverCap = decisions.some(
      ({ status, envelope }) =>
        status === 409 && (envelope.error?.details as { reason?: string } | null)?.reason === "edit_over_cap",
    );
    const onlyRepeatedApprovers =
      steps.every(({ verb, by }) => verb === "approve" && approvedBefore.has(by.person)) &&
      decisions.every(({ status }) => status === 409);
    if (
      verbs[0] === "approve" &&
      executable &&
      !editOverCap &&
      unconfirmed.length < decisions.length &&
      !onlyRepeatedApprovers &&
      !decisions.some(({ status }) => status === 200)
    ) {
      violated("3", "a pending approval that could still execute was refused", decisions[0]?.envelope.error);
    }
    await checkWorld([run], []);
  }

  toString(): string {
    const restart = this.restartsAfter ? ", then the run's ledger restarts" : "";
    return `${this.runName}: operator ${this.kind} approval #${this.pick}${this.confirms ? "" : " (duplicates unconfirmed)"}${restart}`;
  }
}

/**
 * An agent's call, then at once an operator's decision of the approval it opened (duplicates
 * confirmed). False when the call opened no approval (a spent budget, a closed run): nothing to decide.
 */
async function askThenDecide(
  ask: AgentCallCommand,
  call: AgentCall,
  model: ReferenceModel,
  world: RealWorld,
  kind: DecisionKind,
  restartsAfter: boolean,
): Promise<boolean> {
  await ask.run(model, world);
  const run = runOf(model, call.run);
  const keySig = keySigOf(call);
  const pick = [...run.approvals.values()].findIndex((approval) => approval.keySig === keySig);
  if (pick < 0) return false;
  await new DecideCommand(run.name, pick, kind, true, restartsAfter).run(model, world);
  return true;
}

/**
 * acme's agent asks for a refund over its two-person threshold and its operators decide it at once:
 * two people, one person's two keys, two racing approvals or one, confirming any earlier refund of
 * the order. Left to chance, a decision seldom meets such an approval while it can still execute.
 */
export class TwoPersonRefundCommand implements ModelCommand {
  readonly #ask: AgentCallCommand;

  constructor(
    readonly call: AgentCall,
    readonly kind: DecisionKind,
    readonly restartsAfter: boolean,
  ) {
    this.#ask = new AgentCallCommand(call, [call.door]);
  }

  check(model: Readonly<ReferenceModel>): boolean {
    return this.#ask.check(model);
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    const decided = await askThenDecide(this.#ask, this.call, model, world, this.kind, this.restartsAfter);
    if (decided) world.stats.twoPerson.decided++;
  }

  toString(): string {
    const restart = this.restartsAfter ? ", then the run's ledger restarts" : "";
    return `${this.#ask.toString()}; then at once operator ${this.kind} it (duplicates confirmed)${restart}`;
  }
}

/**
 * An agent asks for a refund that waits for a human, an operator lowers its amount and approves it
 * at once (a second operator too, where two must), and the agent resends the call as it asked it,
 * `resends` times: each resend must be answered with the edited call, and the call as asked must
 * never reach the upstream (rule 12, checked with the sandbox's records after every step).
 */
export class EditedRefundCommand implements ModelCommand {
  readonly #ask: AgentCallCommand;

  constructor(
    readonly call: AgentCall,
    readonly resends: number,
    readonly restartsAfter: boolean,
  ) {
    this.#ask = new AgentCallCommand(call, [call.door]);
  }

  check(model: Readonly<ReferenceModel>): boolean {
    return this.#ask.check(model);
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    if (!(await askThenDecide(this.#ask, this.call, model, world, "approve with edit", this.restartsAfter)))
      return;
    for (let resend = 0; resend < this.resends; resend++) await this.#ask.run(model, world);
  }

  toString(): string {
    const restart = this.restartsAfter ? ", the run's ledger restarting after the decision" : "";
    return `${this.#ask.toString()}; then at once an operator lowers its amount and approves it${restart}; the agent resends it ${this.resends} time(s)`;
  }
}

/**
 * An answer that shows the approval edited: the call stands for the edited arguments from now on,
 * under the edited call's key (the agent's resend is answered with it).
 */
function learnEdit(key: KeyModel, decisions: readonly Decision[], world: RealWorld): void {
  for (const { status, envelope } of decisions) {
    if (status !== 200) continue;
    const decided = (
      envelope.data as {
        approval?: {
          tool?: string;
          args?: Record<string, unknown>;
          edit?: unknown;
          idempotency_key?: string;
        };
      } | null
    )?.approval;
    if (!decided?.edit || !decided.args || key.editedArgsSig !== undefined) continue;
    key.editedArgsSig = argsSigOf(key.tool, decided.args);
    key.key = decided.idempotency_key ?? key.key;
    count(world.stats, "approved with edit");
  }
}

/**
 * Whether a 200 answers an approval that an earlier decision had approved already (the same
 * decision again is a no-op): the approval it shows was approved before `since`.
 */
function repeatsEarlierApproval({ envelope }: Decision, since: number): boolean {
  const shown = (envelope.data as { approval?: { state?: string; decided_at?: string | null } } | null)
    ?.approval;
  if (shown?.state !== "approved" && shown?.state !== "executed") return false;
  const decidedAt = typeof shown.decided_at === "string" ? Date.parse(shown.decided_at) : Number.NaN;
  return decidedAt < since;
}

/** What the approve/reject answer tells about the key: executed, sent in doubt, or unknown. */
function learnFromDecision(key: KeyModel, approval: ApprovalModel, { status, envelope }: Decision): void {
  if (status >= 500) {
    if (key.state.kind !== "completed") key.state = { kind: "lost" };
    return;
  }
  if (status !== 200) return;
  const decided = (envelope.data as { approval?: { state?: string; result?: unknown } } | null)?.approval;
  if (!decided?.state) return;
  approval.state = decided.state;
  const result = envelopeSchema().safeParse(decided.result);
  if (result.success) learnKeyState(key, result.data);
  else if (decided.state === "approved" && key.state.kind === "unsent") key.state = { kind: "in_doubt" };
}

/** Arms a fault in the sandbox for the run's next request to a path (the operator's included). */
export class ArmFaultCommand implements ModelCommand {
  constructor(
    readonly runName: RunName,
    readonly path: "/refunds" | "/tickets",
    readonly fault: HeaderFault,
  ) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.runName] !== undefined && (!isSlow(this.fault) || model.slowFaultsLeft > 0);
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    if (isSlow(this.fault)) model.slowFaultsLeft--;
    await armFault(runOf(model, this.runName).handle.id, { path_prefix: this.path, ...this.fault });
  }

  toString(): string {
    return `${this.runName}: sandbox arms${showFault(this.fault)} for the next ${this.path}`;
  }
}

export type RestartTarget = "every Durable Object" | "hooli's effect shards" | RunName;

/**
 * A restart between calls: every Durable Object aborted, one run's ledger restarted, or every
 * effect shard of the tenant whose runs share caps (what they hold must outlive the instance).
 */
export class RestartCommand implements ModelCommand {
  constructor(readonly target: RestartTarget) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return (
      this.target === "every Durable Object" ||
      this.target === "hooli's effect shards" ||
      model.runs[this.target] !== undefined
    );
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    if (this.target === "every Durable Object") {
      await abortAllDurableObjects();
      forgetRefusingDirectories();
      await checkWorld(openRunsOf(model), []);
      return;
    }
    if (this.target === "hooli's effect shards") {
      await restartEffectShards("hooli");
      await checkWorld(
        openRunsOf(model).filter((run) => run.tenant === "hooli"),
        [],
      );
      return;
    }
    const run = runOf(model, this.target);
    // Between calls, so nothing is in flight: a status read wakes the ledger, then it restarts alone.
    await runStatusOf(run.handle);
    await restartDurableObject(ledgerStubOf(run.handle));
    await checkWorld([run], []);
  }

  toString(): string {
    if (this.target === "every Durable Object") return "restart: abort every Durable Object";
    if (this.target === "hooli's effect shards") return "restart: restart every hooli effect shard";
    return `restart: restart the ${this.target} run's ledger alone`;
  }
}

/**
 * Time reaches the run's deadline, the way a test can fake it: the deadline moves into
 * the past and the ledger reloads. An alarm the ledger had set for no later than the deadline would
 * have fired by then, so it is fired too; a later one (retention, an approval's 24 h) would not.
 */
export class PassDeadlineCommand implements ModelCommand {
  constructor(readonly runName: RunName) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.runName]?.lifecycle === "open";
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const run = runOf(model, this.runName);
    // A run no request reached yet has no ledger to move the clock of: its status creates it.
    await storeRun(run.handle);
    const stub = ledgerStubOf(run.handle);
    const alarmDue = await runInDurableObject(stub, async (_instance, state) => {
      const { deadline_at } = state.storage.sql
        .exec<{ deadline_at: number }>("SELECT deadline_at FROM run")
        .one();
      const alarm = await state.storage.getAlarm();
      state.storage.sql.exec("UPDATE run SET deadline_at = ?", Date.now() - 1_000);
      return alarm !== null && alarm <= deadline_at;
    });
    await restartDurableObject(stub);
    // The restart broke every stub to the old instance; the alarm goes to the fresh one.
    if (alarmDue) await runDurableObjectAlarm(ledgerStubOf(run.handle));
    run.lifecycle = "past_deadline";
    await closeRun(run);
  }

  toString(): string {
    return `${this.runName}: the clock passes the run's deadline`;
  }
}

export class EndRunCommand implements ModelCommand {
  constructor(readonly runName: RunName) {}

  check(model: Readonly<ReferenceModel>): boolean {
    const run = model.runs[this.runName];
    return run !== undefined && run.lifecycle !== "ended";
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const run = runOf(model, this.runName);
    const answer = await endRun(run.handle);
    if (answer.outcome === "success") run.lifecycle = "ended";
    await closeRun(run);
  }

  toString(): string {
    return `${this.runName}: POST /end`;
  }
}

/** From now on the upstream must see nothing more of this run. */
async function closeRun(run: RunModel): Promise<void> {
  // The status read also makes the ledger load the run again, as its next agent call would.
  await runStatusOf(run.handle);
  run.frozenRequests ??= (await upstreamRequestsOf(run.handle)).length;
  run.frozenCredentials ??= canonical(await presentedCredentialsOf(run.handle));
  await checkWorld([run], []);
}

/** Rule 6: prototype-polluting keys are refused by name, before anything is charged upstream. */
export class PollutedArgumentsCommand implements ModelCommand {
  constructor(
    readonly runName: RunName,
    readonly badKey: "__proto__" | "constructor" | "prototype",
    readonly nested: boolean,
  ) {}

  check(model: Readonly<ReferenceModel>): boolean {
    return model.runs[this.runName]?.lifecycle === "open";
  }

  async run(model: ReferenceModel, world: RealWorld): Promise<void> {
    world.stats.commands++;
    const run = runOf(model, this.runName);
    const order = { acme: "A1001", globex: "B2002", hooli: "H0001" }[run.tenant];
    // Written by hand: in an object literal "__proto__" sets the prototype, so JSON.stringify would
    // never send it as a key.
    const args = this.nested
      ? `{"order_id":"${order}","filters":{"${this.badKey}":{"admin":true}}}`
      : `{"order_id":"${order}","${this.badKey}":{"admin":true}}`;
    const seen = (await upstreamRequestsOf(run.handle)).length;
    const answer = await sendRawCall(run.handle, `{"tool":"lookup_order","args":${args}}`);
    const named = answer.error?.problems.some((problem) => problem.field.includes(this.badKey)) ?? false;
    if (answer.error?.code !== "validation_error" || !named) {
      violated("6", `a "${this.badKey}" key was not refused by name`, answer.error);
    }
    if ((await upstreamRequestsOf(run.handle)).length !== seen) {
      violated("6", `a call with a "${this.badKey}" key reached the upstream`);
    }
    await checkWorld([run], []);
  }

  toString(): string {
    return `${this.runName}: lookup_order with a ${this.nested ? "nested " : ""}"${this.badKey}" key`;
  }
}
