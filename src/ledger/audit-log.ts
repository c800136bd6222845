import { DurableObject } from "cloudflare:workers";
import { postSignedEvent } from "../approvals/signed-webhook";
import { type ChainHead, nextReceipt } from "../audit/chain";
import type { AuditQuery } from "../audit/filters";
import { auditSignerOf } from "../audit/signer";
import { DEFAULT_AUDIT_RETENTION_DAYS } from "../config/audit";
import { loadConfig } from "../config/load";
import { tenantObject } from "../config/placement";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";
import { applyMigrations } from "../core/sql-migrations";
import type { Env } from "../env";
import type { AuditDraft, AuditEvent, Receipt } from "../wire/audit";
import { AUDIT_V1, AuditStore, type PushBatch } from "./audit-store";
import { retryDelayMs } from "./outbox";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Receipts per pushed batch: one webhook each, well under a receiver's usual body limit. */
const PUSH_BATCH = 100;

/** The audit log of `tenant`: one object per tenant, where its residency puts the tenant's objects. */
export function auditLogOf(env: Env, tenant: string): DurableObjectStub<AuditLog> {
  return tenantObject(env, env.AUDIT_LOG, tenant, tenant);
}

/** The `webhook-id` of a pushed batch: the same range always goes under the same id (the receiver's dedup key). */
export function pushIdOf(tenant: string, batch: Pick<PushBatch, "first" | "last">): string {
  return `audit_${tenant}_${batch.first}_${batch.last}`;
}

/**
 * A tenant's audit log (docs/audit.md): every effect decision of the tenant's runs as a receipt,
 * chained and signed in the order they arrive. The runs' ledgers deliver their receipts through
 * their outboxes, at least once; a receipt id the log holds is not appended again, so each decision
 * has exactly one receipt. Appends run one after another (signing awaits), so two can never take
 * the same place: the chain never forks, and its `seq` is the table's primary key besides.
 *
 * The log keeps each receipt for the tenant's `audit.retention_days` after it was written (400 by
 * default), deleted by its alarm; the chain's head outlives them. With `audit.push` it pushes its
 * receipts in signed batches on the deployment's webhook, each batch retried under its id until
 * acknowledged.
 */
export class AuditLog extends DurableObject<Env> {
  readonly #store: AuditStore;
  /** The append under way, which the next one waits for. */
  #appending: Promise<unknown> = Promise.resolve();
  #pushing: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = new AuditStore(ctx.storage.sql);
    void ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage.sql, [AUDIT_V1]));
  }

  /**
   * Appends the receipts of `drafts` the log does not hold yet, in order, and returns once they are
   * stored: the ledger's outbox then lets its rows go.
   */
  append(tenant: string, drafts: AuditDraft[]): Promise<void> {
    const turn = this.#appending.then(() => this.#append(tenant, drafts));
    this.#appending = turn.catch(() => {});
    return turn;
  }

  async #append(tenant: string, drafts: readonly AuditDraft[]): Promise<void> {
    const chain = this.#store.chain();
    if (chain && chain.tenant !== tenant) throw new Error("this audit log belongs to another tenant");
    // A receipt the log holds (a delivery repeated after a lost answer) is not appended again.
    const seen = this.#store.known(drafts.map((draft) => draft.id));
    const fresh: AuditDraft[] = [];
    for (const draft of drafts) {
      if (seen.has(draft.id)) continue;
      seen.add(draft.id);
      fresh.push(draft);
    }
    if (fresh.length === 0) return;
    const signer = await auditSignerOf(loadConfig(this.env).auditSigningKeys);
    let head: ChainHead | null = chain;
    const receipts: Receipt[] = [];
    for (const draft of fresh) {
      const receipt = await nextReceipt(head, tenant, await eventOf(draft), Date.now(), signer);
      receipts.push(receipt);
      head = receipt;
    }
    this.ctx.storage.transactionSync(() => this.#store.append(tenant, receipts));
    await this.#scheduleAlarm(tenant);
    if (this.#settings(tenant).push) this.ctx.waitUntil(this.#push(tenant));
  }

  /**
   * One page of receipts after `query.after`, oldest first, each as the log wrote it (canonical
   * JSON), and the `seq` the next page starts after (null on the last). A log of another tenant
   * answers nothing.
   */
  page(tenant: string, query: AuditQuery): { receipts: string[]; next_after: number | null } {
    const chain = this.#store.chain();
    if (!chain || chain.tenant !== tenant) return { receipts: [], next_after: null };
    const rows = this.#store.page(query);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      receipts: page.map((row) => row.receipt),
      next_after: rows.length > query.limit && last ? last.seq : null,
    };
  }

  /** One receipt by its place in the chain, as the log wrote it; null when not kept, or another tenant's. */
  receipt(tenant: string, seq: number): string | null {
    return this.#store.chain()?.tenant === tenant ? this.#store.one(seq) : null;
  }

  /** The chain's head: how many receipts the log has written, and the last one's hash. */
  head(tenant: string): ChainHead | null {
    const chain = this.#store.chain();
    return chain && chain.tenant === tenant ? { seq: chain.seq, hash: chain.hash } : null;
  }

  /** Deletes the receipts past the tenant's retention, pushes what is owed, and sets the next alarm. */
  override async alarm(): Promise<void> {
    const tenant = this.#store.chain()?.tenant;
    if (!tenant) return;
    const retention = this.#settings(tenant).retention_days * DAY_MS;
    this.#store.deleteRecordedBefore(Date.now() - retention);
    // The alarm is the retry: a failed batch goes again now, whenever its backoff said.
    if (this.#settings(tenant).push) await this.#push(tenant, true);
    await this.#scheduleAlarm(tenant);
  }

  #settings(tenant: string) {
    return (
      loadConfig(this.env).tenants[tenant]?.audit ?? {
        retention_days: DEFAULT_AUDIT_RETENTION_DAYS,
        push: false,
      }
    );
  }

  /** The alarm rings when the oldest receipt passes its retention, or a failed push is due again. */
  async #scheduleAlarm(tenant: string): Promise<void> {
    const oldest = this.#store.oldestRecordedAt();
    const expiry = oldest === null ? null : oldest + this.#settings(tenant).retention_days * DAY_MS;
    const due = [expiry, this.#store.pushDueAt()].filter((at): at is number => at !== null);
    if (due.length === 0) return;
    const at = Math.min(...due);
    if ((await this.ctx.storage.getAlarm()) !== at) await this.ctx.storage.setAlarm(at);
  }

  /**
   * Pushes every batch owed, one at a time; a failure leaves the batch for the alarm. A batch that
   * failed waits for its backoff (`due`) unless the alarm itself pushes.
   */
  #push(tenant: string, due = false): Promise<void> {
    this.#pushing ??= this.#pushOwed(tenant, due).finally(() => {
      this.#pushing = null;
    });
    return this.#pushing;
  }

  async #pushOwed(tenant: string, due: boolean): Promise<void> {
    for (;;) {
      const retryAt = this.#store.pushDueAt();
      if (!due && retryAt !== null && retryAt > Date.now()) return;
      const batch = this.#store.nextBatch(PUSH_BATCH);
      if (!batch) return;
      const receipts = this.#store.range(batch.first, batch.last);
      // The same batch has the same body at every attempt: the receipts as the log wrote them.
      const body = `{"type":"audit.receipts","tenant":${JSON.stringify(tenant)},"first_seq":${batch.first},"last_seq":${batch.last},"receipts":[${receipts.join(",")}]}`;
      const outcome = await postSignedEvent(this.env, { id: pushIdOf(tenant, batch), at: new Date(), body });
      if (outcome !== "acknowledged") {
        this.#store.pushFailed(Date.now() + retryDelayMs(batch.attempts + 1));
        await this.#scheduleAlarm(tenant);
        return;
      }
      this.#store.pushed(batch);
    }
  }
}

/** The event a draft records, its upstream's answer replaced by that answer's digest. */
async function eventOf(draft: AuditDraft): Promise<AuditEvent> {
  if (!draft.upstream) return { ...draft, upstream: null };
  const { answer, ...upstream } = draft.upstream;
  return {
    ...draft,
    upstream: { ...upstream, answer_digest: await sha256Hex(canonicalJson(answer ?? null)) },
  };
}
