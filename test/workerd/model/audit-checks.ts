import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { createLocalJWKSet } from "jose/jwks/local";
import { verifyExport } from "../../../src/audit/verify";
import { parseUpstreamSigningKeys, publicJwks } from "../../../src/config/signing-keys";
import type { Receipt } from "../../../src/wire/audit";
import { ledgerStubOf, OPERATOR_KEYS } from "../helpers";
import type { RunModel, TenantName } from "./reference";
import { violated } from "./violation";

/**
 * Rule 13, once the sequence is quiet: each tenant's audit log is the record of its runs' ledgers.
 * Its chain verifies whole with the published keys (every receipt from the first, each linked to the
 * one before and signed), holds each receipt once, and holds, for each run, exactly one receipt of
 * each approval decision its ledger holds and exactly one `made` receipt of each write its ledger
 * holds as done, and no other: whatever restarted (every Durable Object, mid-call) between a
 * decision's commit and its delivery.
 */

const keys = createLocalJWKSet(
  publicJwks(parseUpstreamSigningKeys("AUDIT_SIGNING_KEYS", env.AUDIT_SIGNING_KEYS)),
);

async function chainOf(tenant: TenantName): Promise<Receipt[]> {
  const response = await exports.default.fetch(
    new Request("https://proxy.test/v1/audit?format=ndjson", {
      headers: { authorization: `Bearer ${OPERATOR_KEYS[tenant]}` },
    }),
  );
  const text = new TextDecoder().decode(await response.arrayBuffer());
  const verdict = await verifyExport(text, keys);
  if (!verdict.ok) violated("13", `the ${tenant} audit chain breaks`, verdict);
  if (verdict.first_seq !== null && verdict.first_seq !== 1) {
    violated("13", `the ${tenant} audit chain lost its first receipts`, verdict);
  }
  const receipts = text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Receipt);
  const ids = new Set(receipts.map((receipt) => receipt.id));
  if (ids.size !== receipts.length) violated("13", `the ${tenant} audit chain holds a receipt twice`);
  return receipts;
}

interface LedgerRecord {
  approvals: Array<{ id: string; state: string }>;
  /** The keys of writes the ledger holds as done (their effect confirmed). */
  made: string[];
}

async function recordOf(run: RunModel): Promise<LedgerRecord> {
  return runInDurableObject(ledgerStubOf(run.handle), (_instance, state) => {
    const sql = state.storage.sql;
    const stored = sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'run'").toArray();
    if (stored.length === 0) return { approvals: [], made: [] };
    const approvals = sql.exec<{ id: string; state: string }>("SELECT id, state FROM approvals").toArray();
    const made = sql
      .exec<{ key: string; envelope: string | null }>(
        "SELECT key, envelope FROM idempotency WHERE state = 'completed' AND side_effect IN ('write', 'destructive')",
      )
      .toArray()
      .filter((row) => {
        const stored = row.envelope === null ? null : (JSON.parse(row.envelope) as Record<string, unknown>);
        const error = stored?.error as { side_effect_confirmed?: boolean | null } | null | undefined;
        return stored?.outcome === "success" || error?.side_effect_confirmed === true;
      })
      .map((row) => row.key);
    return { approvals: approvals.map((row) => ({ id: row.id, state: row.state })), made };
  });
}

const DECISION_OF: Record<string, readonly string[]> = {
  approved: ["approval.approved"],
  executed: ["approval.approved"],
  rejected: ["approval.rejected"],
  expired: ["approval.expired", "approval.withdrawn"],
};
const DECISIONS = ["approval.approved", "approval.rejected", "approval.expired", "approval.withdrawn"];

export async function checkAuditOf(runs: readonly RunModel[]): Promise<void> {
  const tenants = [...new Set(runs.map((run) => run.tenant))];
  const chains = new Map<TenantName, Receipt[]>();
  for (const tenant of tenants) chains.set(tenant, await chainOf(tenant));
  for (const run of runs) {
    const receipts = (chains.get(run.tenant) ?? []).filter((receipt) => receipt.run_id === run.handle.id);
    const record = await recordOf(run);
    for (const approval of record.approvals) {
      const decisions = receipts.filter(
        (receipt) => receipt.approval?.id === approval.id && DECISIONS.includes(receipt.type),
      );
      const expected = DECISION_OF[approval.state] ?? [];
      const matching = decisions.filter((receipt) => expected.includes(receipt.type));
      if (expected.length > 0 && matching.length !== 1) {
        violated(
          "13",
          `approval ${approval.id} (${approval.state}) has ${matching.length} receipts of its decision`,
          {
            types: decisions.map((receipt) => receipt.type),
          },
        );
      }
      if (new Set(decisions.map((receipt) => receipt.type)).size !== decisions.length) {
        violated(
          "13",
          `approval ${approval.id} has a decision recorded twice`,
          decisions.map((r) => r.type),
        );
      }
    }
    const made = receipts.filter(
      (receipt) => receipt.type === "effect.outcome" && receipt.upstream?.outcome === "made",
    );
    const madeKeys = made.map((receipt) => receipt.call?.idempotency_key ?? "");
    if (
      madeKeys.length !== new Set(madeKeys).size ||
      [...madeKeys].sort().join() !== [...record.made].sort().join()
    ) {
      violated("13", `the ${run.tenant} run's receipts of writes made differ from its ledger`, {
        ledger: record.made,
        receipts: madeKeys,
      });
    }
  }
}
