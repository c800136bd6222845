import { announceOverdue } from "../approvals/notify";
import { MAX_SUBJECTS_PER_RUN, subjectsOf } from "../approvals/subjects";
import type { ToolSpec } from "../catalog/define-tool";
import { tenantObject } from "../config/placement";
import type { Env } from "../env";
import type { RunMeta } from "../machine/run-state";
import { assertNever } from "../wire/envelope";
import type { RunIndexEntry } from "../wire/run-summary";
import { auditLogOf } from "./audit-log";
import type { ApprovalDirectory } from "./directory";
import { reportEffect } from "./effects-client";
import type { DirectoryMessage, Outbox, OutboxRow } from "./outbox";

/**
 * How long a new run's entry waits in the outbox for the run's first call before the alarm delivers
 * it: long enough for an agent's model to choose that call, so one delivery carries the run and
 * what its first call named; a run not called by then is listed when it passes.
 */
export const OPENED_ENTRY_WAIT_MS = 10_000;

/**
 * What a run's ledger has told the tenant's directory about the run, kept in memory so the
 * directory hears of each tool and each subject once, not once per call, and of the run's end once.
 * The sets are stored with the run (`told`, written in the commit that enqueues the entry) and read
 * back when the ledger wakes, so a run called again after its object left memory does not tell the
 * directory again what it already knows. The directory only adds what it is told
 * (src/ledger/directory.ts `indexRun`), so telling twice would be harmless, only costly.
 */
export class RunIndex {
  readonly #tools = new Set<string>();
  readonly #subjects = new Set<string>();
  /** How the directory was last told the run ended: past its deadline, then (maybe) closed. */
  #toldEnd: "expired" | "closed" | null = null;

  /** What has been learned, as stored with the run (`seed` reads it back). */
  told(): string {
    return JSON.stringify({ tools: [...this.#tools], subjects: [...this.#subjects] });
  }

  /** What a woken ledger read back of `told`: known already, so not news. Anything unreadable is ignored. */
  seed(told: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(told);
    } catch {
      return;
    }
    const list = (value: unknown) =>
      Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
    const { tools, subjects } = (parsed ?? {}) as { tools?: unknown; subjects?: unknown };
    for (const tool of list(tools)) this.#tools.add(tool);
    for (const subject of list(subjects).slice(0, MAX_SUBJECTS_PER_RUN)) this.#subjects.add(subject);
  }

  /** Learns a call's tool and subjects; true when one of them is new, so the directory must hear of it. */
  learn(tool: string | null, subjects: readonly string[]): boolean {
    let learned = false;
    if (tool !== null && !this.#tools.has(tool)) {
      this.#tools.add(tool);
      learned = true;
    }
    for (const subject of subjects) {
      // A looping agent inventing ids must not grow the run's entry, or the writes, without bound.
      if (this.#subjects.size >= MAX_SUBJECTS_PER_RUN) break;
      if (this.#subjects.has(subject)) continue;
      this.#subjects.add(subject);
      learned = true;
    }
    return learned;
  }

  /**
   * True once per way the run ends: when it passes its deadline, and again if it is then closed
   * (an end after the deadline is news too), so its final state and counters go out each time.
   */
  learnEnded(run: RunMeta, now: number): boolean {
    const end = run.state === "closed" ? "closed" : now >= run.deadline_at ? "expired" : null;
    if (end === null || end === this.#toldEnd) return false;
    this.#toldEnd = end;
    return true;
  }

  /** The run as the directory indexes it, with every tool and subject learned so far. */
  entry(run: RunMeta, now: number): RunIndexEntry {
    const iso = (ms: number) => new Date(ms).toISOString();
    return {
      run_id: run.run_id,
      namespace: run.namespace,
      state: run.state,
      created_at: iso(run.created_at),
      deadline_at: iso(run.deadline_at),
      ended_at: run.ended_at === null ? null : iso(run.ended_at),
      calls_used: run.counters.calls_used,
      tools: [...this.#tools].sort(),
      subjects: [...this.#subjects].sort(),
      last_activity_at: iso(now),
    };
  }
}

/**
 * The tenant's shared objects as one run's ledger writes to them: the directory (the run's index
 * entry and its approvals) and the effect shards holding the run's claims (each claimed key's fate),
 * each a message of the run's outbox (`outbox.ts`), written in the commit of the change it reports
 * and delivered after it, until its object has it.
 */
export class RunDirectory {
  readonly #index = new RunIndex();
  /** The index learned a tool or a subject the directory has not been written yet. */
  #untold = false;
  readonly #outbox: Outbox;
  readonly #env: Env;
  /** The delivery under way, if any: one at a time, so two never race to acknowledge one row. */
  #delivering: Promise<void> | null = null;
  #deliverAgain = false;
  #answerWaits = false;

  readonly #keepTold: (told: string) => void;

  /** `keepTold` stores what the directory has been told with the run, in the enqueuing commit. */
  constructor(env: Env, outbox: Outbox, keepTold: (told: string) => void) {
    this.#env = env;
    this.#outbox = outbox;
    this.#keepTold = keepTold;
  }

  /** What a woken ledger read back of what the directory has been told of its run. */
  told(told: string | null): void {
    if (told !== null) this.#index.seed(told);
  }

  /** A call's tool and subjects: the next commit writes the run's entry when one of them is new. */
  learnCall(tool: ToolSpec | null, args: Record<string, unknown> | null): void {
    if (this.#index.learn(tool?.name ?? null, subjectsOf(args, tool?.sensitive_args))) this.#untold = true;
  }

  /**
   * Writes the run's entry to the outbox when the directory has something new to hear of it: it
   * opened (`opened`), named a new tool or subject, or ended. Inside the commit's `transactionSync`.
   */
  enqueueRun(run: RunMeta, now: number, opened = false): void {
    const ended = this.#index.learnEnded(run, now);
    if (!opened && !ended && !this.#untold) return;
    // A new run's entry waits for its first call, whose commit rewrites it and is delivered at once.
    const dueAt = opened ? now + OPENED_ENTRY_WAIT_MS : undefined;
    this.#outbox.enqueue({ kind: "run", entry: this.#index.entry(run, now) }, now, dueAt);
    if (this.#untold) this.#keepTold(this.#index.told());
    this.#untold = false;
  }

  /** When the alarm must ring to retry a message, or null when the directory is owed nothing. */
  nextAttemptAt(): number | null {
    return this.#outbox.nextAttemptAt();
  }

  /**
   * Delivers every undelivered message, one RPC each, deleting each once the directory returned. A
   * failure leaves the message for the alarm, backing off. A call while a delivery runs joins it,
   * and the running one goes round once more for what was committed since it read the outbox.
   */
  deliver(tenant: string, answerWaits = false): Promise<void> {
    this.#deliverAgain = true;
    // A call's answer waits for this delivery: what it acknowledges is deleted with the next commit.
    if (answerWaits) this.#answerWaits = true;
    this.#delivering ??= this.#deliverWhileOwed(tenant);
    return this.#delivering;
  }

  async #deliverWhileOwed(tenant: string): Promise<void> {
    try {
      // The first pass always awaits, so `#delivering` is set before this can clear it.
      while (this.#deliverAgain) {
        this.#deliverAgain = false;
        const answerWaits = this.#answerWaits;
        this.#answerWaits = false;
        await this.#deliverOnce(tenant, answerWaits);
      }
    } finally {
      this.#delivering = null;
    }
  }

  /**
   * Sends every message due at once: each is about its own topic and applied idempotently, so none
   * waits for another (a run's entry for its effect's fate, the directory for a shard, any of them
   * for a slow webhook receiver). What came back is then acknowledged or postponed in one
   * synchronous turn, which the runtime commits as one write rather than one per message.
   */
  async #deliverOnce(tenant: string, answerWaits: boolean): Promise<void> {
    const directory = tenantObject(this.#env, this.#env.APPROVAL_DIRECTORY, tenant, tenant);
    const now = Date.now();
    // A webhook receiver is someone else's server: once it failed, it is tried again when its
    // backoff is due (the alarm rings then), not after every commit of the run.
    const due = this.#outbox
      .undelivered()
      .filter((row) => row.message.kind !== "escalation" || row.attempts === 0 || row.next_attempt_at <= now);
    // A commit's receipts go to the audit log together, in one RPC that stores them in their order.
    const receipts = due.filter((row) => row.message.kind === "audit");
    const sent = await Promise.all([
      ...due
        .filter((row) => row.message.kind !== "audit")
        .map(async (row) => {
          try {
            await deliverMessage(this.#env, directory, tenant, row.message);
            return [{ row, error: null, delivered: true }];
          } catch (error) {
            return [{ row, error, delivered: false }];
          }
        }),
      deliverReceipts(this.#env, tenant, receipts),
    ]);
    for (const { row, error, delivered } of sent.flat()) {
      if (delivered) {
        this.#outbox.acknowledge(row, answerWaits);
        continue;
      }
      console.error(`directory delivery of ${row.topic} failed; the alarm retries it`, error);
      this.#outbox.postpone(row, Date.now());
    }
  }
}

/** A commit's receipts to the tenant's audit log, in one RPC; every row shares its fate. */
async function deliverReceipts(env: Env, tenant: string, rows: readonly OutboxRow[]) {
  const drafts = rows.flatMap((row) => (row.message.kind === "audit" ? [row.message.event] : []));
  if (drafts.length === 0) return [];
  try {
    await auditLogOf(env, tenant).append(tenant, drafts);
    return rows.map((row) => ({ row, error: null, delivered: true }));
  } catch (error) {
    return rows.map((row) => ({ row, error, delivered: false }));
  }
}

/** One message to the directory's RPC; it returns once the directory has stored it. */
async function deliverMessage(
  env: Env,
  directory: DurableObjectStub<ApprovalDirectory>,
  tenant: string,
  message: DirectoryMessage,
): Promise<void> {
  switch (message.kind) {
    case "approval":
      await directory.upsert(message.summary, tenant);
      return;
    case "escalation":
      await announceOverdue(env, tenant, message.summary, message.escalation_role);
      return;
    case "run":
      await directory.indexRun(message.entry);
      return;
    case "effect":
      await reportEffect(env, tenant, message.shards, message.update);
      return;
    case "audit":
      await auditLogOf(env, tenant).append(tenant, [message.event]);
      return;
    default:
      assertNever(message);
  }
}
