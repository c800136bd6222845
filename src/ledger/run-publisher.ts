import type { ApprovalSummary } from "../approvals/model";
import type { Env } from "../env";
import { nextAlarmAt, RECONCILE_AFTER_MS, retainUntil } from "../machine/run-events";
import type { RunMeta } from "../machine/run-state";
import { announceApprovals } from "./approval-store";
import type { LedgerStores } from "./commit";
import { OPENED_ENTRY_WAIT_MS, type RunDirectory } from "./run-index";

/**
 * How much later than the outbox's own retry a delivery's guard may leave an alarm that is already
 * set: a delivery that a restart cuts off then reaches its object at most this much later, the wait
 * a new run's entry already has. A run's first call finds the open's alarm within it, and sets no
 * alarm before its delivery, only the one after.
 */
const GUARD_SLACK_MS = OPENED_ENTRY_WAIT_MS;

/**
 * What a run's ledger does after a commit, and the one alarm it keeps: announce approval changes on
 * the webhook, deliver what the commit wrote to the outbox to the tenant's directory, and set the
 * alarm to whichever comes first of the next approval expiry, a send's reconciliation, the
 * outbox's next retry and the run's deletion. Kept apart from the ledger so the object itself only
 * loads, commits and keeps requests in flight.
 */
export class RunPublisher {
  readonly #env: Env;
  readonly #ctx: DurableObjectState;
  readonly #stores: LedgerStores;
  readonly #directory: RunDirectory;
  readonly #run: () => RunMeta | null;
  readonly #sendsInFlight: () => number;
  /**
   * The alarm as this instance last set it (epoch ms), or null when it is not known: a fresh
   * instance, or one whose alarm just rang. Setting the same alarm again is skipped.
   */
  #alarmAt: number | null = null;
  /**
   * When the alarm looks for sends a restart cut off, as the first send in flight asked for it,
   * until the alarm rings (null: no send asked since).
   */
  #reconcileAt: number | null = null;

  constructor(
    env: Env,
    ctx: DurableObjectState,
    parts: {
      stores: LedgerStores;
      directory: RunDirectory;
      run: () => RunMeta | null;
      sendsInFlight: () => number;
    },
  ) {
    this.#env = env;
    this.#ctx = ctx;
    this.#stores = parts.stores;
    this.#directory = parts.directory;
    this.#run = parts.run;
    this.#sendsInFlight = parts.sendsInFlight;
  }

  /** Whether a commit left the directory something to deliver. */
  owesDirectory(): boolean {
    return this.#directory.nextAttemptAt() !== null;
  }

  /**
   * Right after a commit, in its own turn so the alarm is stored with it: a crash before the delivery
   * still leaves an alarm that delivers what the commit owes the directory.
   */
  guardDelivery(): void {
    if (this.owesDirectory()) this.#ctx.waitUntil(this.scheduleAlarm(true));
  }

  /** The alarm rang: the runtime cleared it, and nothing is set until the handler sets it again. */
  alarmRang(): void {
    this.#alarmAt = null;
    this.#reconcileAt = null;
  }

  /**
   * After a commit: announces its approval changes on the webhook and delivers what it wrote to the
   * outbox. An approval change (or a republished approval) is waited for, so the operators' list
   * shows it when the answer arrives, and so is a keyed send's outcome (`awaitDelivery`); a run
   * entry alone is delivered in the background.
   */
  async publish(summaries: ApprovalSummary[], awaitDelivery = summaries.length > 0): Promise<void> {
    const run = this.#run();
    if (!run) return;
    announceApprovals(this.#env, (promise) => this.#ctx.waitUntil(promise), run.tenant, summaries);
    if (!this.owesDirectory()) return;
    if (awaitDelivery) await this.deliver(true);
    else this.#ctx.waitUntil(this.deliver());
  }

  /**
   * Delivers the outbox to the tenant's directory, then sets the alarm for what is left of it.
   * `answerWaits`: a call's answer waits for it (`Outbox.acknowledge`).
   */
  async deliver(answerWaits = false): Promise<void> {
    const run = this.#run();
    if (!run) return;
    await this.#directory.deliver(run.tenant, answerWaits);
    await this.scheduleAlarm();
  }

  /**
   * Sets the alarm to what comes first, unless it is set there already. Its reads and the
   * `setAlarm` run synchronously, so called right after a commit the alarm is stored with it.
   *
   * A send's reconciliation is asked for once, by the first send in flight, and kept until the
   * alarm rings: a write after it, sent before that ring, is covered by it too (the ring looks for
   * sends cut off, and asks again while any is in flight). So a run writing steadily sets its alarm
   * about once per `RECONCILE_AFTER_MS`, instead of moving it twice per write, to the write's own
   * reconciliation and back to the run's deletion.
   * `guard`: it is the guard of a delivery about to start, which only needs an alarm to ring
   * should the delivery not finish; one set to ring sooner, or up to `GUARD_SLACK_MS` later (up to
   * `RECONCILE_AFTER_MS` when it is that reconciliation, which delivers the outbox too), stays, and
   * the delivery sets the alarm again once it is done.
   */
  async scheduleAlarm(guard = false): Promise<void> {
    const run = this.#run();
    if (!run) return;
    const now = Date.now();
    if (this.#reconcileAt !== null && this.#reconcileAt <= now) this.#reconcileAt = null;
    if (this.#sendsInFlight() > 0) this.#reconcileAt ??= now + RECONCILE_AFTER_MS;
    const { approvals } = this.#stores;
    // A run without a pending approval (a new one, most) reads none here: the store counts them.
    const due = nextAlarmAt(run, approvals.nextExpiry(), this.#reconcileAt, approvals.nextEscalation());
    const retry = this.#directory.nextAttemptAt();
    // Past its retention a run is kept only for what its outbox still owes (a receipt the audit log
    // has not taken): its alarm follows the outbox's backoff, not the deletion already due.
    const at = retry !== null && retainUntil(run) <= now ? retry : Math.min(due, retry ?? due);
    if (at === this.#alarmAt) return;
    const set = this.#alarmAt;
    const slack = set === this.#reconcileAt ? RECONCILE_AFTER_MS : GUARD_SLACK_MS;
    if (guard && set !== null && set > now && set <= at + slack) return;
    this.#alarmAt = at;
    try {
      await this.#ctx.storage.setAlarm(at);
    } catch (error) {
      this.#alarmAt = null;
      throw error;
    }
  }
}
