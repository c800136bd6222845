import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { ledgerStubOf, restartDurableObject, type TestRun } from "./helpers";

/**
 * Time passing without waiting for it. A run's clock lives in stored times (its ledger's run and
 * approvals, their copies in the tenant's directory); moving every one of them back by the same
 * amount is the run as it would be had it been opened that much earlier. The ledger then restarts,
 * so it serves from storage what it had loaded. A test that needs what the runtime would have done
 * meanwhile fires the alarm itself (`runDurableObjectAlarm`), as a real clock would have.
 */

/** Moves a run's stored clock back by `ms`: its deadline and approvals' expiries come `ms` sooner. */
export async function rewindRun(run: TestRun, ms: number): Promise<void> {
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    const sql = state.storage.sql;
    sql.exec("UPDATE run SET created_at = created_at - ?1, deadline_at = deadline_at - ?1", ms);
    sql.exec("UPDATE approvals SET created_at = created_at - ?1, expires_at = expires_at - ?1", ms);
  });
  await rewindDirectory(run, ms);
  await restartDurableObject(ledgerStubOf(run));
}

/** Moves a run back until its deadline has just passed. */
export async function passDeadline(run: TestRun): Promise<void> {
  const deadline = Date.parse(String(run.data.deadline_at));
  await rewindRun(run, Math.max(0, deadline - Date.now()) + 1_000);
}

const earlier = (iso: string, ms: number) => new Date(Date.parse(iso) - ms).toISOString();

/** The directory's copy of the run and its approvals (ISO text, and each approval's summary). */
async function rewindDirectory(run: TestRun, ms: number): Promise<void> {
  const directory = env.APPROVAL_DIRECTORY.get(env.APPROVAL_DIRECTORY.idFromName(run.tenant));
  await runInDurableObject(directory, (_instance, state) => {
    const sql = state.storage.sql;
    for (const row of sql
      .exec<{ created_at: string; deadline_at: string; last_activity_at: string }>(
        "SELECT created_at, deadline_at, last_activity_at FROM runs WHERE run_id = ?",
        run.id,
      )
      .toArray()) {
      sql.exec(
        "UPDATE runs SET created_at = ?, deadline_at = ?, last_activity_at = ? WHERE run_id = ?",
        earlier(row.created_at, ms),
        earlier(row.deadline_at, ms),
        earlier(row.last_activity_at, ms),
        run.id,
      );
    }
    for (const row of sql
      .exec<{ id: string; summary: string }>("SELECT id, summary FROM approvals WHERE run_id = ?", run.id)
      .toArray()) {
      const summary = JSON.parse(row.summary) as { created_at: string; expires_at: string };
      const shifted = {
        ...summary,
        created_at: earlier(summary.created_at, ms),
        expires_at: earlier(summary.expires_at, ms),
      };
      sql.exec(
        "UPDATE approvals SET created_at = ?, expires_at = ?, summary = ? WHERE id = ?",
        shifted.created_at,
        shifted.expires_at,
        JSON.stringify(shifted),
        row.id,
      );
    }
  });
}
