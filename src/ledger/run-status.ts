import type { RunLimits } from "../config/tenants";
import type { Budget, EnvironmentName } from "../envelope";
import { budgetLeft, type Counters } from "../pipeline/budget";
import type { RunMeta, Taint } from "../pipeline/run-state";

/** What `GET /v1/runs/{id}` reports: the run's state, what it has spent and what is left. */
export interface RunStatus {
  run_id: string;
  namespace: string;
  environment: EnvironmentName;
  state: "open" | "closed" | "expired";
  created_at: string;
  deadline_at: string;
  ended_at: string | null;
  catalog_version: string;
  limits: RunLimits;
  used: Counters;
  budget: Budget;
  /** Set once the run has read third-party text: from then on every destructive call waits for a human. */
  tainted_by: Taint | null;
}

export function runStatus(run: RunMeta, now: number): RunStatus {
  return {
    run_id: run.run_id,
    namespace: run.namespace,
    environment: run.environment,
    state: run.state === "open" && now >= run.deadline_at ? "expired" : run.state,
    created_at: new Date(run.created_at).toISOString(),
    deadline_at: new Date(run.deadline_at).toISOString(),
    ended_at: run.ended_at === null ? null : new Date(run.ended_at).toISOString(),
    catalog_version: run.catalog_version,
    limits: run.limits,
    used: run.counters,
    budget: budgetLeft(run.limits, run.counters, run.deadline_at, now),
    tainted_by: run.tainted_by,
  };
}
