import { tenantObject } from "../config/placement";
import type { Env } from "../env";
import type { RpcClient } from "./rpc-client";
import type { RunLedger } from "./run-ledger";

/** The RunLedger's RPC surface as the worker uses it: its methods' own signatures (`rpc-client.ts`). */
export type LedgerClient = RpcClient<
  RunLedger,
  | "open"
  | "openPending"
  | "status"
  | "end"
  | "touchSession"
  | "sessionCall"
  | "readTrace"
  | "readTracePage"
  | "call"
  | "approval"
  | "approvalWithCall"
  | "decide"
  | "withdrawApproval"
  | "resultPage"
  | "effectFate"
  | "toolSet"
  | "addTools"
>;

/**
 * The run's ledger. Its id is derived from tenant and run id together, so a run id alone, guessed or
 * leaked, never reaches another tenant's ledger.
 */
export function ledgerFor(env: Env, tenant: string, runId: string): LedgerClient {
  return tenantObject(env, env.RUN_LEDGER, tenant, `${tenant}/${runId}`);
}
