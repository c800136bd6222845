import type { SideEffect } from "../catalog/define-tool";
import { type FaultPlan, faultFits } from "../scenarios/modes";
import type { ScenarioStep } from "../scenarios/scenario";
import type { FaultMode } from "../wire/scenario";

/** The run's scenario steps and what is left of each; created by ledger migration V4. */
export const SCENARIO_SCHEMA = `
CREATE TABLE IF NOT EXISTS scenario (
  step INTEGER PRIMARY KEY,
  mode TEXT NOT NULL,
  tool TEXT,
  path_prefix TEXT,
  times INTEGER NOT NULL,
  remaining INTEGER NOT NULL,
  hang_ms INTEGER,
  retry_after_s INTEGER
);
`;

interface StepRow extends Record<string, SqlStorageValue> {
  step: number;
  mode: string;
  tool: string | null;
  path_prefix: string | null;
  times: number;
  remaining: number;
  hang_ms: number | null;
  retry_after_s: number | null;
}

/** One upstream request as a scenario step matches it. */
export interface UpstreamTarget {
  tool: string;
  side_effect: SideEffect;
  path: string;
}

export interface ScenarioStepState extends ScenarioStep {
  /** Position in the scenario: steps fire in this order. */
  step: number;
  remaining: number;
}

/**
 * The scenario in the run's own SQLite database. `take` finds and spends a use in one synchronous
 * step, so two requests of the run in flight at once can never both spend the last use.
 */
export class ScenarioStore {
  readonly #sql: SqlStorage;
  /**
   * Uses left across all steps, read once: steps are only written when the run opens, so a run
   * without a scenario (every production run, most sandbox ones) never reads the table again.
   */
  #remaining: number | null = null;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** The uses left, as a woken ledger's first read found them. */
  known(remaining: number): void {
    this.#remaining = remaining;
  }

  insert(steps: readonly ScenarioStep[]): void {
    this.#remaining = null;
    steps.forEach((step, index) => {
      this.#sql.exec(
        `INSERT INTO scenario (step, mode, tool, path_prefix, times, remaining, hang_ms, retry_after_s)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        index,
        step.mode,
        step.tool,
        step.path_prefix,
        step.times,
        step.times,
        step.hang_ms,
        step.retry_after_s,
      );
    });
  }

  list(): ScenarioStepState[] {
    return this.#sql
      .exec<StepRow>("SELECT * FROM scenario ORDER BY step")
      .toArray()
      .map((row) => ({
        step: row.step,
        mode: row.mode as FaultMode,
        tool: row.tool,
        path_prefix: row.path_prefix,
        times: row.times,
        remaining: row.remaining,
        hang_ms: row.hang_ms,
        retry_after_s: row.retry_after_s,
      }));
  }

  /** Whether a step has uses left: a request of a run without one needs no target to match. */
  armed(): boolean {
    return this.#left() > 0;
  }

  #left(): number {
    this.#remaining ??=
      this.#sql.exec<{ left: number | null }>("SELECT SUM(remaining) AS left FROM scenario").one().left ?? 0;
    return this.#remaining;
  }

  /** The fault for this request, spending one use of the first step that matches; null when none does. */
  take(target: UpstreamTarget): FaultPlan | null {
    const left = this.#left();
    if (left === 0) return null;
    const step = this.list().find((candidate) => candidate.remaining > 0 && matches(candidate, target));
    if (!step) return null;
    this.#sql.exec("UPDATE scenario SET remaining = remaining - 1 WHERE step = ?", step.step);
    this.#remaining = left - 1;
    return { mode: step.mode, hang_ms: step.hang_ms, retry_after_s: step.retry_after_s };
  }
}

/**
 * A step matches by tool or by path prefix (or every request when it names neither), and only a
 * request its mode can apply to: a step waiting for a write is not spent on the read before it.
 */
function matches(step: ScenarioStep, target: UpstreamTarget): boolean {
  if (!faultFits(step.mode, target.side_effect)) return false;
  if (step.tool !== null && step.tool !== target.tool) return false;
  if (step.path_prefix !== null && !target.path.startsWith(step.path_prefix)) return false;
  return true;
}
