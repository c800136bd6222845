import { MAX_SUBJECTS_PER_RUN } from "../approvals/subjects";
import type { RunMeta } from "../pipeline/run-state";
import type { RunIndexEntry } from "../wire/run-summary";

/**
 * What a run's ledger has told the tenant's directory about the run, kept in memory so the
 * directory hears of each tool and each subject once, not once per call, and of the run's end once.
 * After a restart the sets start empty and the ledger tells again what it meets; the directory only
 * adds what it is told (src/approvals/directory.ts `indexRun`), so telling twice is harmless.
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
