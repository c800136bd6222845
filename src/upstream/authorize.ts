import type { ToolSpec } from "../catalog/define-tool";
import { idempotencyHeaderOf } from "../catalog/key-promise";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import type { Execution } from "../machine/request";
import type { StoredRequest } from "../machine/run-state";
import {
  bearer,
  CREDENTIAL_MARGIN_MS,
  type CredentialRequest,
  type CredentialUser,
  credentialExpiry,
  issueUpstreamCredential,
  missingSecret,
  staticAuthorization,
  type UpstreamAuthorization,
} from "./credential";

/**
 * The one place the proxy authorizes a request to an upstream: a run's dispatch (`execute.ts`)
 * and an operator's read for an approval (`operator-read.ts`) alike.
 */

/** Whom a credential speaks for: the tenant and the run, and what it may never outlive. */
export interface CredentialHolder {
  tenant: string;
  run: string;
  /** Epoch ms (the run's deadline) no credential outlives; null: only its request's time bounds it. */
  notAfter: number | null;
  /** Whom the run acts for, carried as the credential's `act` claim; null: no user. */
  user?: CredentialUser | null;
}

/**
 * Credentials signed in the last moment, by run, audience and the one request each names. A dispatch
 * may reuse one only for the identical request (a read's retry, an identical call's resend) and only
 * while it still outlives the attempt (its tool's timeout), which leaves the reuse window at
 * the margin: a second at most. Bounded, since one isolate can host many runs.
 */
const recentCredentials = new Map<string, { token: string; exp: number }>();
export const RECENT_CREDENTIALS_MAX = 256;

/**
 * A credential for one request: the declared static key, or the proxy's JWT naming the run, the
 * audience (the tool; for a remote MCP server, the server) and the one request it may make (method,
 * target, body digest, idempotency key), expiring within one attempt's time (`timeoutMs`) plus a
 * small margin and never after `notAfter`, so one captured from a log is worth that request for
 * seconds, not a run; null for a server that takes none.
 */
export async function authorizationFor(
  env: Env,
  holder: CredentialHolder,
  tool: ToolSpec,
  audience: string | null,
  request: CredentialRequest,
  timeoutMs: number = tool.timeout_ms,
): Promise<UpstreamAuthorization | null> {
  const now = Date.now();
  // A declared static header is the credential, or nothing is sent (it throws): never the JWT instead.
  const declared = tool.upstream?.credential;
  if (declared) return staticAuthorization(declared, env);
  if (audience === null) return null;
  const cacheKey = JSON.stringify([holder.tenant, holder.run, audience, request]);
  const recent = recentCredentials.get(cacheKey);
  if (recent && recent.exp - now >= timeoutMs + CREDENTIAL_MARGIN_MS / 2) return bearer(recent.token);
  const expiry = credentialExpiry(now, timeoutMs);
  const exp =
    holder.notAfter === null ? expiry : Math.min(expiry, Math.floor(holder.notAfter / 1_000) * 1_000);
  const token = await issueUpstreamCredential(
    { tenant: holder.tenant, run: holder.run, tool: audience, exp, request, user: holder.user ?? null },
    loadConfig(env).upstreamSigningKeys,
    now,
  );
  if (recentCredentials.size >= RECENT_CREDENTIALS_MAX) recentCredentials.clear();
  recentCredentials.set(cacheKey, { token, exp });
  return bearer(token);
}

/** The credential of an HTTP tool's stored request; its audience is the tool, so one is always made. */
export async function requestAuthorization(
  env: Env,
  holder: CredentialHolder,
  tool: ToolSpec,
  stored: StoredRequest,
  timeoutMs: number = tool.timeout_ms,
): Promise<UpstreamAuthorization> {
  const request: CredentialRequest = {
    method: stored.method,
    target: stored.target,
    body: stored.body,
    idempotency_key: stored.headers[idempotencyHeaderOf(tool)] ?? null,
  };
  const credential = await authorizationFor(env, holder, tool, tool.name, request, timeoutMs);
  if (!credential) throw new Error(`no credential for ${tool.name}, whose audience is itself`);
  return credential;
}

/**
 * A tool whose declared static header names a secret this environment lacks is not sent at all:
 * its call answers `configuration_error`, naming the secret (its name, never a value), before any
 * request leaves. The proxy never sends another kind of credential in its place.
 */
export function unsentWithoutSecret(env: object, tool: ToolSpec): Execution | null {
  const secret = missingSecret(tool.upstream?.credential, env);
  if (secret === null) return null;
  return {
    ok: false,
    status: null,
    attempts: [],
    failure: {
      code: "configuration_error",
      message: `The proxy is not configured to call ${tool.name}: its upstream takes the secret ${secret}, which is not set here, so nothing was sent and no other credential was tried. A retry fails alike until an operator sets it; hand over to a human.`,
      side_effect_confirmed: false,
      recommended_next_action: "escalate_to_human",
      details: { missing_secret: secret, upstream: tool.upstream?.binding ?? null },
    },
  };
}
