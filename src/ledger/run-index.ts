import type { ApprovalSummary } from "../approvals/model";
import { MAX_SUBJECTS_PER_RUN, subjectsOf } from "../approvals/subjects";
import type { ToolSpec } from "../catalog/define-tool";
import type { Env } from "../env";
import type { RunMeta } from "../pipeline/run-state";
import type { RunIndexEntry } from "../wire/run-summary";
import { publishApprovals } from "./approval-store";

/**
 * What a run's ledger has told the tenant's directory about the run, kept in memory so the
 * directory hears of each tool and each subject once, not once per call, and of the run's end once.
 * After a restart the sets start empty and the ledger tells again what it meets; the directory only
 * adds what it is told (src/ledger/directory.ts `indexRun`), so telling twice is harmless.
 */
export class RunIndex {
  readonly #tools = new Set<string>();
  readonly #subjects = new Set<string>();
  #toldEnded = false;

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

  /** True once, when the run has ended (closed, or past its deadline): its final counters go out then. */
  learnEnded(run: RunMeta, now: number): boolean {
    if (this.#toldEnded || (run.state !== "closed" && now < run.deadline_at)) return false;
    this.#toldEnded = true;
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

/** The tenant's directory as one run's ledger writes to it: the run's entry and its approvals. */
export class RunDirectory {
  readonly #index = new RunIndex();
  readonly #env: Env;
  readonly #waitUntil: (promise: Promise<unknown>) => void;

  constructor(env: Env, waitUntil: (promise: Promise<unknown>) => void) {
    this.#env = env;
    this.#waitUntil = waitUntil;
  }

  /**
   * Writes the run through to the directory, where operators list and search runs. Never awaited:
   * the agent's answer does not wait for the index, which only adds what it is told, so a late or
   * repeated write is harmless.
   */
  tellRun(run: RunMeta): void {
    const directory = this.#env.APPROVAL_DIRECTORY.get(this.#env.APPROVAL_DIRECTORY.idFromName(run.tenant));
    this.#waitUntil(
      directory.indexRun(this.#index.entry(run, Date.now())).catch((error: unknown) => {
        console.error("run index write failed", error);
      }),
    );
  }

  /** A call's tool and subjects: the directory hears of them when one is new. */
  learnCall(run: RunMeta, tool: ToolSpec | null, args: Record<string, unknown> | null): void {
    if (this.#index.learn(tool?.name ?? null, subjectsOf(args, tool?.sensitive_args))) this.tellRun(run);
  }

  /** The directory hears once that the run has ended, with its final counters. */
  learnEnded(run: RunMeta): void {
    if (this.#index.learnEnded(run, Date.now())) this.tellRun(run);
  }

  publishApprovals(run: RunMeta, summaries: readonly ApprovalSummary[]): Promise<void> {
    return publishApprovals(this.#env, this.#waitUntil, run.tenant, summaries);
  }
}
