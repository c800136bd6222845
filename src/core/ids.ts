/**
 * Every id the proxy mints, in one place: a prefix that says what the id names, then random hex
 * from `crypto.randomUUID()` (122 random bits), cut to a length that stays unguessable.
 */

function randomHex(chars: number): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, chars);
}

/** A run: `run_` + 32 hex characters. */
export function newRunId(): string {
  return `run_${randomHex(32)}`;
}

/**
 * The run of an orchestrator's task: `run_` + 32 hex characters of a digest of tenant and task key,
 * so every open of one task names one run (and one ledger), whichever isolate takes it.
 */
export async function taskRunId(tenant: string, taskKey: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${tenant}\u0000${taskKey}`));
  const hex = [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `run_${hex.slice(0, 32)}`;
}

/** One dispatch of a tool, by an agent or an operator's approval: `call_` + 24 hex. */
export function newCallId(): string {
  return `call_${randomHex(24)}`;
}

/** A request for a human's decision: `apr_` + 24 hex. */
export function newApprovalId(): string {
  return `apr_${randomHex(24)}`;
}

/** A receipt of the tenant's audit log: `rcp_` + 24 hex, minted with the decision it records. */
export function newReceiptId(): string {
  return `rcp_${randomHex(24)}`;
}

/** A large result kept in pages: `res_` + 24 hex. */
export function newResultHandle(): string {
  return `res_${randomHex(24)}`;
}

/** A read the console makes to show an operator the context of a decision: `context_` + 24 hex. */
export function newContextCallId(): string {
  return `context_${randomHex(24)}`;
}

/** The request id of a draft's preview the console fetches: `preview_` + a UUID. */
export function newPreviewRequestId(): string {
  return `preview_${crypto.randomUUID()}`;
}

/** A run's secret fence marker: 12 hex characters the model cannot guess to forge a fence's end. */
export function newFenceMarker(): string {
  return randomHex(12);
}
