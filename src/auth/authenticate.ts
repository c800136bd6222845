import type { ProxyConfig } from "../config/load";
import { assertNever } from "../wire/envelope";
import { agentOfGrant, findAgentKey, grantOf } from "./agent-keys";
import { verifySession } from "./console-session";
import { findKeyOwner } from "./keys";
import { operatorIdOf } from "./operator-id";
import { operatorNameOf, operatorRolesOf } from "./operator-keys";
import { ACCEPTS, type Accept, type Principal, type PrincipalKind, type PrincipalOf } from "./principal";
import { type Refusal, type RefusalReason, refusal } from "./refusals";
import { verifyRunToken } from "./run-token";

export type Authentication<A extends Accept> =
  | { ok: true; principal: PrincipalOf<A> }
  | { ok: false; refusal: Refusal };

export interface AuthenticateOptions {
  /** On the routes of one run: the run a run token must be signed for. */
  run?: string;
  /**
   * On `/mcp`: the props the OAuth provider hands a request whose access token it verified. Props of
   * any other shape (a plain request's empty props) are no grant, and the credential decides.
   */
  oauthProps?: unknown;
  now?: number;
}

/** A kind's verdict on a credential: its principal, not of this kind (try the next), or a refusal that ends the search. */
type Attempt = Principal | RefusalReason | null;

const AS_OPERATOR = {
  run: "run_token_as_operator",
  tenant: "tenant_key_as_operator",
  agent: "agent_key_as_operator",
} as const satisfies Record<(typeof ACCEPTS.operator.named)[number], RefusalReason>;

/**
 * Stage "authenticate", for every route: who `credential` (a bearer token, the console's session
 * cookie, a key typed into the sign-in form) proves the caller to be, among the kinds `accept` takes,
 * or why not. Keys are stored hashed and compared in constant time; run tokens and sessions are
 * verified by signature. Routes only map the answer to their protocol: a 401 or 403 envelope, an
 * MCP challenge, a redirect to sign in.
 *
 * @example
 * const answer = await authenticate(config, bearerToken(header), "run", { run: runId });
 * if (answer.ok) answer.principal.claims.ns;
 */
export async function authenticate<A extends Accept>(
  config: ProxyConfig,
  credential: string | null | undefined,
  accept: A,
  options: AuthenticateOptions = {},
): Promise<Authentication<A>> {
  const { kinds, named } = ACCEPTS[accept];
  const now = options.now ?? Date.now();
  const refuse = (reason: RefusalReason): Authentication<A> => ({
    ok: false,
    refusal: refusal(reason, accept),
  });
  const admit = (principal: Principal): Authentication<A> => {
    if (principal.kind === "run" && options.run !== undefined && principal.claims.run !== options.run) {
      return refuse("other_run");
    }
    return isAccepted(principal, accept) ? { ok: true, principal } : refuse("unknown");
  };

  // The provider already verified the access token; what is left is whether its profile still exists.
  const kindList: readonly PrincipalKind[] = kinds;
  const grant = kindList.includes("agent") ? grantOf(options.oauthProps) : null;
  if (grant) {
    const agent = agentOfGrant(config, grant);
    return agent ? admit({ kind: "agent", agent }) : refuse("stale_grant");
  }
  if (!credential) return refuse("missing");
  for (const kind of kindList) {
    const verdict = await attempt(kind, credential, config, now);
    if (typeof verdict === "string") return refuse(verdict);
    if (verdict) return admit(verdict);
  }
  for (const kind of named) {
    const verdict = await attempt(kind, credential, config, now);
    // Only a credential that would pass on its own route is named; an expired one is just not valid here.
    if (verdict !== null && typeof verdict !== "string") return refuse(AS_OPERATOR[kind]);
  }
  return refuse("unknown");
}

function isAccepted<A extends Accept>(principal: Principal, accept: A): principal is PrincipalOf<A> {
  const kinds: readonly PrincipalKind[] = ACCEPTS[accept].kinds;
  return kinds.includes(principal.kind);
}

async function attempt(
  kind: PrincipalKind,
  credential: string,
  config: ProxyConfig,
  now: number,
): Promise<Attempt> {
  switch (kind) {
    case "tenant": {
      const tenant = await findKeyOwner(credential, config.tenantKeyHashes);
      return tenant ? { kind, tenant } : null;
    }
    case "run": {
      const verified = await verifyRunToken(credential, config.runTokenKeys, now);
      if (verified.ok) return { kind, claims: verified.payload };
      // "malformed" means not shaped like a run token at all: it may be a credential of the next kind.
      return verified.reason === "malformed" ? null : verified.reason;
    }
    case "agent": {
      const agent = await findAgentKey(credential, config);
      return agent ? { kind, agent } : null;
    }
    case "operator": {
      const tenant = await findKeyOwner(credential, config.operatorKeyHashes);
      if (!tenant) return null;
      const operator = await operatorIdOf(credential);
      return {
        kind,
        operator: {
          tenant,
          operator,
          name: operatorNameOf(config.operatorKeys, tenant, operator),
          roles: operatorRolesOf(config.operatorKeys, tenant, operator),
        },
      };
    }
    case "session": {
      const session = await verifySession(credential, config, now);
      if (!session) return null;
      return {
        kind,
        session: {
          ...session,
          name: operatorNameOf(config.operatorKeys, session.tenant, session.operator),
          roles: operatorRolesOf(config.operatorKeys, session.tenant, session.operator),
        },
      };
    }
    default:
      return assertNever(kind);
  }
}
