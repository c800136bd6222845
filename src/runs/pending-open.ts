import type { RunTokenClaims } from "../auth/run-token";
import type { Caller } from "../door/entry";
import type { Env } from "../env";
import { type LedgerClient, ledgerFor } from "../ledger/client";
import type { PendingOpen } from "../ledger/ledger-api";

/**
 * An open that stores nothing: `POST /v1/runs` without a task key or a scenario answers from the
 * worker alone, and its run token carries what the run is created from (`RunTokenClaims.open`).
 * The run's first request creates it in its ledger, as the open would have, with its wall clock
 * from the open. A run that is never called costs no object, no alarm and no directory entry.
 * Opens with a task key store their run at once: a retry must find the same run.
 */

/** A run token's claims, as far as its run's requests need them. */
export type RunClaims = Pick<RunTokenClaims, "tenant" | "run" | "ns" | "tools" | "open">;

/** The open a run token carries, as the run's ledger takes it; undefined when the open stored its run. */
export function pendingOpenOf(claims: RunClaims): PendingOpen | undefined {
  const { open } = claims;
  if (open === undefined) return undefined;
  return {
    run_id: claims.run,
    namespace: claims.ns,
    limits: open.limits,
    repeat_threshold: open.repeat_threshold,
    tools: claims.tools ?? null,
    reach: open.reach,
    opened_at: open.at,
    catalog_version: open.catalog_version,
    ...(open.user === undefined ? {} : { user: open.user }),
    profile: open.profile ?? null,
    tools_seen: open.tools_seen,
  };
}

/** Who calls tools with a run token: its run, and the open to create that run from when it stored nothing. */
export function callerOf(claims: RunClaims): Caller {
  const open = pendingOpenOf(claims);
  return {
    tenant: claims.tenant,
    run: claims.run,
    namespace: claims.ns,
    ...(open === undefined ? {} : { open }),
  };
}

/**
 * Asks a run's ledger on a run token's behalf (its status, its trace, its end, tools added): when
 * the ledger finds no run and the token carries an open that stored nothing, the run is created
 * from it and asked again. A run that exists is asked once.
 */
export async function askRun<T>(
  env: Env,
  claims: RunClaims,
  ask: (ledger: LedgerClient) => Promise<T>,
  found: (answer: T) => boolean,
): Promise<T> {
  const ledger = ledgerFor(env, claims.tenant, claims.run);
  const answer = await ask(ledger);
  const pending = pendingOpenOf(claims);
  if (found(answer) || pending === undefined) return answer;
  return (await ledger.openPending(claims.tenant, pending)) ? ask(ledger) : answer;
}
