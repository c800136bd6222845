import { APPROVAL_TTL_MS } from "../../../src/approvals/model";
import { DEFAULT_LIMITS } from "../../../src/config/tenants";
import type { RunMeta } from "../../../src/machine/run-state";

/**
 * An open acme run of the support namespace, as the ledger keeps it: opened at `t0` with one call
 * used, living twice an approval's lifetime, untainted.
 */
export function openAcmeRun(input: { run_id: string; catalog_version: string; t0: number }): RunMeta {
  return {
    tenant: "acme",
    run_id: input.run_id,
    namespace: "support",
    environment: "sandbox",
    catalog_version: input.catalog_version,
    limits: DEFAULT_LIMITS,
    repeat_threshold: 3,
    state: "open",
    created_at: input.t0,
    deadline_at: input.t0 + APPROVAL_TTL_MS * 2,
    ended_at: null,
    counters: { calls_used: 1, writes_used: 0, destructive_used: 0 },
    fence_marker: "fence0000000",
    tainted_by: null,
  };
}
