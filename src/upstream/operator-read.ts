import type { ToolSpec } from "../catalog/define-tool";
import { environmentOf } from "../config/environment";
import type { Env } from "../env";
import type { Execution } from "../machine/request";
import type { StoredRequest } from "../machine/run-state";
import { requestAuthorization, unsentWithoutSecret } from "./authorize";
import { resolveUpstream } from "./bindings";
import { executeRequest } from "./dispatch";

/** The approval an operator reads for: its tenant and run are whom the read's credential names. */
export interface ReadFor {
  tenant: string;
  run_id: string;
}

/**
 * One read an operator's approval page makes of an upstream (a decision context's facts, a draft
 * about to be sent): sent through `reader`'s own binding with a credential for that one request,
 * in `reader`'s name, as a read (retried on a transient failure) that is over within `timeoutMs`,
 * its answer held to `reader`'s output contract. It is not a call of the run: it spends no budget
 * and touches no ledger. Null when `reader`'s upstream is not reachable from this environment.
 */
export async function readForOperator(
  env: Env,
  approval: ReadFor,
  reader: ToolSpec,
  request: StoredRequest,
  timeoutMs: number,
): Promise<Execution | null> {
  const upstream = reader.upstream ? resolveUpstream(env, reader.upstream, environmentOf(env)) : null;
  if (!upstream) return null;
  const unsent = unsentWithoutSecret(env, reader);
  if (unsent) return unsent;
  const now = Date.now();
  const timeout = Math.min(reader.timeout_ms, timeoutMs);
  // Asking changes nothing, whatever the reader's own calls do (a draft tool's records are read too).
  const asRead: ToolSpec = { ...reader, side_effect: "read", timeout_ms: timeout };
  const holder = { tenant: approval.tenant, run: approval.run_id, notAfter: null };
  const credential = await requestAuthorization(env, holder, asRead, request);
  return executeRequest({
    tool: asRead,
    request,
    upstream,
    credential: async () => credential,
    traceparent: null,
    // A page waits for this read at most its short timeout, retries included.
    deadlineAt: now + timeout,
  });
}
