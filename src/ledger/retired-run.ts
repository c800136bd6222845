import { EFFECT_WINDOW_MS } from "../catalog/effect-rules";
import type { RunMeta } from "../machine/run-state";

/**
 * What retention leaves of a deleted run: that its id was taken. A task's run id is derived from
 * the tenant and the task key, so opening the same task again after the deletion would make a new
 * run under the old id, and the tenant's effect shards, which still hold the old run's effects under
 * that id for their window, would take them for the new run's own: its refund of an order the old
 * run refunded would go out as no repeat. So the id stays taken for the longest effect window, and
 * an open of it is refused (`RunLedger.open`); then the mark goes too.
 */
export interface RetiredRun {
  run_id: string;
  deleted_at: number;
  /** When the mark is deleted: no shard holds an effect of the run any longer. */
  until: number;
}

const RETIRED_KEY = "retired_run";

/** Marks the deleted run's id as taken, in the emptied object's storage; when the mark goes. */
export function retire(kv: SyncKvStorage, run: RunMeta, now: number): RetiredRun {
  const retired = {
    run_id: run.run_id,
    deleted_at: now,
    until: now + EFFECT_WINDOW_MS.max,
  };
  kv.put(RETIRED_KEY, retired);
  return retired;
}

/** The mark of a run retention deleted here, or null. */
export function retiredRun(kv: SyncKvStorage): RetiredRun | null {
  return kv.get<RetiredRun>(RETIRED_KEY) ?? null;
}
