import { type ApprovalSummary, summarize } from "../approvals/model";
import type { Write } from "../pipeline/admit";
import type { RunMeta, TraceCompletion } from "../pipeline/run-state";
import { assertNever } from "../wire/envelope";
import type { ApprovalStore } from "./approval-store";
import type { KeyStore } from "./key-store";
import type { RunStore } from "./run-store";

export interface LedgerStores {
  run: RunStore;
  keys: KeyStore;
  approvals: ApprovalStore;
}

/**
 * Applies the admission machine's writes to the run's tables, in order. Called inside
 * `transactionSync`, so an event's writes commit together or not at all. Returns the run as the
 * writes leave it, and the approvals they changed, for the tenant's directory.
 */
export function commitWrites(
  stores: LedgerStores,
  run: RunMeta,
  writes: readonly Write[],
): { run: RunMeta; changed: ApprovalSummary[] } {
  let next = run;
  const changedIds: string[] = [];
  // An entry opened and closed by the same event is written whole, in one statement.
  const closes = new Map<string, TraceCompletion>();
  for (const write of writes) if (write.kind === "trace_close") closes.set(write.call_id, write.completion);
  const writtenWhole = new Set<string>();
  for (const write of writes) {
    switch (write.kind) {
      case "counters":
        stores.run.writeCounters(write.counters);
        next = { ...next, counters: write.counters };
        break;
      case "close_run":
        stores.run.closeRun(write.at);
        next = { ...next, state: "closed", ended_at: write.at };
        break;
      case "taint":
        // The first call that read third-party text is the one named; later ones change nothing.
        if (next.tainted_by === null) {
          stores.run.taint(write.taint);
          next = { ...next, tainted_by: write.taint };
        }
        break;
      case "trace_open": {
        const completion = closes.get(write.entry.call_id) ?? null;
        stores.run.insertTrace(write.entry, completion);
        if (completion) writtenWhole.add(write.entry.call_id);
        break;
      }
      case "trace_close":
        if (!writtenWhole.has(write.call_id)) stores.run.completeTrace(write.call_id, write.completion);
        break;
      case "key_hold":
        stores.keys.hold(write.record, write.now);
        break;
      case "key_send":
        stores.keys.send(write.key, write.tool, write.side_effect, write.request, write.now);
        break;
      case "key_settle":
        stores.keys.settle(write.key, write.state, write.envelope, write.now);
        break;
      case "approval_open":
        stores.approvals.insert(write.approval);
        changedIds.push(write.approval.id);
        break;
      case "approval_state":
        stores.approvals.setState(write.id, write.state, write.decision, write.result ?? null);
        changedIds.push(write.id);
        break;
      default:
        assertNever(write);
    }
  }
  const changed: ApprovalSummary[] = [];
  for (const id of new Set(changedIds)) {
    const approval = stores.approvals.byId(id);
    if (approval) changed.push(summarize(approval));
  }
  return { run: next, changed };
}

/**
 * A read's admission, held in memory until the read's outcome commits with it (one transaction per
 * read). What it changes of the run (the calls it spends) applies to the ledger's run at once, so
 * concurrent calls see the budget spent; its trace entry and counters are written with the outcome.
 */
export interface DeferredAdmission {
  writes: Write[];
  digest: string;
}

/**
 * The run as a read's admission leaves it, without touching storage, or null when the writes may
 * not wait for the call's outcome: only a trace entry and spent counters may (a read reserves
 * nothing); anything else must be durable before the call goes on, so the caller commits it.
 */
export function spendInMemory(run: RunMeta, writes: readonly Write[]): RunMeta | null {
  let next = run;
  for (const write of writes) {
    if (write.kind === "counters") next = { ...next, counters: write.counters };
    else if (write.kind !== "trace_open") return null;
  }
  return next;
}
