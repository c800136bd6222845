import type { RunStatus } from "../wire/run-status";
import { budgetLeft } from "./budget";
import type { RunMeta } from "./run-state";

/** What `GET /v1/runs/{id}` reports of a run at `now`: a run past its deadline reads as expired. */
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
    ...(run.user ? { user: run.user } : {}),
  };
}
