import { type ApprovalRecord, type ApprovalSummary, summarize } from "../approvals/model";
import { capLimit } from "../effects/caps";
import { fateOfKey } from "../effects/fate";
import { knownEffect } from "../effects/known-effect";
import type { TenantCheck } from "../effects/reasons";
import type { AgentCall, CallView } from "../machine/admit";
import type { DecisionView } from "../machine/decide";
import { toolOfRun } from "../machine/grants";
import { type InterruptedView, RECONCILE_AFTER_MS } from "../machine/run-events";
import type { RunMeta, TraceCompletion } from "../machine/run-state";
import type { Settlement } from "../machine/settle";
import type { Write } from "../machine/writes";
import { catalog } from "../tools";
import { assertNever } from "../wire/envelope";
import { type ApprovalOwner, ApprovalStore } from "./approval-store";
import { auditBefore, auditDrafts } from "./audit-entries";
import { ClaimStore } from "./claim-store";
import { KeyStore } from "./key-store";
import { Outbox } from "./outbox";
import { RunStore } from "./run-store";

export interface LedgerStores {
  run: RunStore;
  keys: KeyStore;
  approvals: ApprovalStore;
  /** What the tenant's directory and effect shards are owed, written in the same transactions as the changes it reports. */
  outbox: Outbox;
  /** The run's claims on its tenant's shared state, one per key that claimed. */
  claims: ClaimStore;
}

/** The run's tables in its SQLite database; approvals read the run they belong to when they are built. */
export function ledgerStores(sql: SqlStorage, owner: () => ApprovalOwner | null): LedgerStores {
  return {
    run: new RunStore(sql),
    keys: new KeyStore(sql),
    approvals: new ApprovalStore(sql, owner),
    outbox: new Outbox(sql),
    claims: new ClaimStore(sql),
  };
}

/**
 * The admission machine's storage side: what each event reads (its view), and the writes it
 * returns applied to the run's tables. The Durable Object calls both in one synchronous turn.
 */

/** What an agent's call is admitted on; `inflight` and the reads not yet committed live in memory. */
export function callView(
  stores: LedgerStores,
  run: RunMeta,
  call: AgentCall,
  memory: {
    inflight: boolean;
    uncommittedReads: number;
    maxOpenApprovals: number;
    /** The tenant's approval SLA, for tools that declare none. */
    approvalSlaMs?: number | null;
  },
  tenantWide: { check: TenantCheck; per_run: number | null } | null = null,
): CallView {
  const { key } = call;
  const value = tenantWide?.check.claim.value ?? null;
  const record = key ? stores.keys.read(key, call.request) : null;
  const approval = key ? stores.approvals.byKey(key) : null;
  return {
    run,
    record,
    approval,
    // Only a poll reads its earlier polls: the price of asking again (machine/poll-price.ts).
    ...(record?.state === "held" && approval?.state === "pending"
      ? { polls_before: stores.run.countPolls(call.digest, Date.parse(approval.created_at)) }
      : {}),
    pending: key ? stores.approvals.pending() : [],
    // Reads admitted but not yet committed count too: their trace entries are written with them.
    earlier_identical: stores.run.countDigest(call.digest) + memory.uncommittedReads,
    max_open_approvals: memory.maxOpenApprovals,
    approval_sla_ms: memory.approvalSlaMs ?? null,
    inflight: memory.inflight,
    // The run's own cap is read in the turn that commits the claim: two calls of one run cannot both fit.
    claim: tenantWide
      ? {
          check: tenantWide.check,
          run_over:
            value && tenantWide.per_run !== null
              ? capLimit("per_run", tenantWide.per_run, stores.claims.runTotals(value.currency), value)
              : null,
        }
      : null,
  };
}

/**
 * What an operator's decision of one approval is made on. For an edit, also what the run holds
 * under the edited key and the edited call's tenant-wide step, with the run's own cap read in this
 * turn without the claim the edit replaces.
 */
export function decisionView(
  stores: LedgerStores,
  run: RunMeta,
  approvalId: string,
  edit: { key: string; check: TenantCheck | null; per_run: number | null } | null = null,
): DecisionView {
  const approval = stores.approvals.byId(approvalId);
  const value = edit?.check?.claim.value ?? null;
  return {
    run,
    approval,
    record: approval ? stores.keys.read(approval.idempotency_key, null) : null,
    tool: approval ? toolOfRun(catalog, run, approval.tool) : undefined,
    pending: stores.approvals.pending(),
    edit: edit
      ? {
          record: stores.keys.read(edit.key, null),
          check: edit.check,
          run_over:
            value && edit.per_run !== null
              ? capLimit(
                  "per_run",
                  edit.per_run,
                  stores.claims.runTotals(value.currency, approval?.idempotency_key ?? null),
                  value,
                )
              : null,
        }
      : null,
  };
}

/**
 * What a sent call's outcome is settled on, beside the outcome itself. The key's approval is the
 * one read when the send began: a key being sent has no pending approval, and nothing changes an
 * approved or decided one while its request is out.
 */
export function settlementView(
  stores: LedgerStores,
  run: RunMeta,
  key: string | null,
  approval: ApprovalRecord | null,
): Pick<Settlement, "run" | "key" | "record" | "approval" | "pending"> {
  return {
    run,
    key,
    record: key ? stores.keys.read(key, null) : null,
    approval,
    pending: key ? stores.approvals.pending() : [],
  };
}

/** What the alarm reads to find sends a restart cut off; `inflight` is what this instance still sends. */
export function interruptedView(
  stores: LedgerStores,
  run: RunMeta,
  inflight: ReadonlySet<string>,
): InterruptedView {
  const sending = stores.keys.readSending();
  const approvals = new Map<string, ApprovalRecord>();
  for (const record of sending) {
    const approval = stores.approvals.byKey(record.key);
    if (approval) approvals.set(record.key, approval);
  }
  return { run, open: stores.run.readOpenEntries(), sending, inflight, approvals };
}

/**
 * Applies the admission machine's writes to the run's tables, in order. Called inside
 * `transactionSync`, so an event's writes commit together or not at all. Returns the run as the
 * writes leave it, and the approvals they changed, for the approval webhook.
 *
 * Every approval changed, and every one in `republish`, is written to the outbox for the tenant's
 * directory in the same transaction, as it now stands: the directory's copy cannot miss a committed
 * change, whatever happens after the commit. `republish` names approvals whose directory copy may be
 * stale although this event changed nothing of them (a decision refused because the ledger had moved
 * on): their summary goes out again, and no webhook, since their state did not change. So does an
 * approval that recorded its first of two approvers, and one announced overdue.
 */
export function commitWrites(
  stores: LedgerStores,
  run: RunMeta,
  writes: readonly Write[],
  republish: readonly string[] = [],
): { run: RunMeta; changed: ApprovalSummary[] } {
  let next = run;
  const changedIds: string[] = [];
  const escalations: Extract<Write, { kind: "approval_escalate" }>[] = [];
  // Pending approvals an edit or one more approver changed: their directory copy is refreshed, no webhook.
  const edited: string[] = [];
  const approved: string[] = [];
  // An entry opened and closed by the same event is written whole, in one statement.
  const closes = new Map<string, TraceCompletion>();
  for (const write of writes) if (write.kind === "trace_close") closes.set(write.call_id, write.completion);
  const writtenWhole = new Set<string>();
  // What the audit's receipts need of the state these writes change, read before they apply.
  const audited = auditBefore(stores, writes);
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
      case "tool_pins": {
        const pins = { ...next.tool_versions, ...write.pins };
        stores.run.writeToolPins(pins);
        next = { ...next, tool_versions: pins };
        break;
      }
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
      case "key_drop":
        stores.keys.drop(write.key);
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
      case "approval_edit":
        // Its state did not change: the directory's copy is refreshed (its arguments), nothing announced.
        stores.approvals.applyEdit(write.id, write.edited);
        edited.push(write.id);
        break;
      case "approval_approver":
        // The approval stays pending: nothing to announce, but its listed copy shows "1 of 2".
        stores.approvals.addApprover(write.id, write.approver);
        approved.push(write.id);
        break;
      case "approval_state":
        stores.approvals.setState(
          write.id,
          write.state,
          write.decision,
          write.result ?? null,
          write.execution ?? null,
        );
        changedIds.push(write.id);
        break;
      case "approval_in_doubt":
        // Still approved: nothing to announce, but its listed copy says the call is in doubt.
        stores.approvals.markInDoubt(write.id);
        approved.push(write.id);
        break;
      case "approval_escalate":
        stores.approvals.markEscalated(write.id, write.at);
        escalations.push(write);
        break;
      case "effect_claim":
        stores.claims.insert(write.key, write.shards, write.value, write.over_cap);
        break;
      default:
        assertNever(write);
    }
  }
  const now = Date.now();
  reportFates(stores, writes, now);
  for (const event of auditDrafts(stores, next, writes, audited))
    stores.outbox.enqueue({ kind: "audit", event }, now);
  const changed: ApprovalSummary[] = [];
  // An escalated approval's state did not change: its `approval.overdue` webhook goes out through the
  // outbox (retried until delivered, written once with the mark), and its directory copy is refreshed.
  for (const escalation of escalations) {
    const approval = stores.approvals.byId(escalation.id);
    if (!approval) continue;
    const summary = summarize(approval);
    stores.outbox.enqueue({ kind: "escalation", summary, escalation_role: escalation.escalation_role }, now);
  }
  const refreshed = [...escalations.map((escalation) => escalation.id), ...edited, ...approved];
  for (const id of new Set([...changedIds, ...republish, ...refreshed])) {
    const approval = stores.approvals.byId(id);
    if (!approval) continue;
    const summary = summarize(approval);
    stores.outbox.enqueue({ kind: "approval", summary }, now);
    if (changedIds.includes(id)) changed.push(summary);
  }
  return { run: next, changed };
}

/**
 * Every claimed key these writes touched whose fate moved: the new fate is recorded with the claim
 * and written to the outbox for the claim's shards, in the same transaction as the change.
 */
function reportFates(stores: LedgerStores, writes: readonly Write[], now: number): void {
  const keys = new Set<string>();
  for (const write of writes) {
    if (write.kind === "effect_claim" || write.kind === "key_hold" || write.kind === "key_settle") {
      keys.add(write.kind === "key_hold" ? write.record.key : write.key);
    } else if (write.kind === "key_send" || write.kind === "key_drop") {
      keys.add(write.key);
    } else if (write.kind === "approval_state") {
      const key = stores.approvals.byId(write.id)?.idempotency_key;
      if (key) keys.add(key);
    }
  }
  for (const key of keys) {
    const claim = stores.claims.read(key);
    if (!claim) continue;
    const record = stores.keys.read(key, null);
    const fate = fateOfKey(record, stores.approvals.byKey(key));
    if (fate === claim.fate) continue;
    stores.claims.setFate(key, fate);
    const known = knownEffect(record);
    // "sent" waits for the send's outcome, which replaces it and is delivered at once; should the
    // send never settle, the alarm that reconciles it delivers this too, so it asks for no sooner one.
    stores.outbox.enqueue(
      {
        kind: "effect",
        shards: claim.shards,
        update: {
          key,
          fate,
          external_id: typeof known.external_id === "string" ? known.external_id : null,
          override: claim.over_cap,
        },
      },
      now,
      fate === "sent" ? now + RECONCILE_AFTER_MS : undefined,
    );
  }
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

/** The reads admitted and not yet committed, by call digest, for the repeat breaker's count. */
export class DeferredReads {
  readonly #byDigest = new Map<string, number>();

  count(digest: string): number {
    return this.#byDigest.get(digest) ?? 0;
  }

  hold(digest: string, writes: Write[]): DeferredAdmission {
    this.#byDigest.set(digest, this.count(digest) + 1);
    return { writes, digest };
  }

  release({ digest }: DeferredAdmission): void {
    const left = this.count(digest) - 1;
    if (left > 0) this.#byDigest.set(digest, left);
    else this.#byDigest.delete(digest);
  }
}

/**
 * The run as a read's admission leaves it, without touching storage, or null when the writes may
 * not wait for the call's outcome: only a trace entry, spent counters and a tool's pin may (a read
 * reserves nothing); anything else must be durable before the call goes on, so the caller commits it.
 */
export function spendInMemory(run: RunMeta, writes: readonly Write[]): RunMeta | null {
  let next = run;
  for (const write of writes) {
    if (write.kind === "counters") next = { ...next, counters: write.counters };
    // A read's first call of a tool pins it: kept in memory with the run, and stored with the outcome.
    else if (write.kind === "tool_pins")
      next = { ...next, tool_versions: { ...next.tool_versions, ...write.pins } };
    else if (write.kind !== "trace_open") return null;
  }
  return next;
}
