import type { AgentPrincipal } from "./agent-keys";
import type { ConsoleSession } from "./console-session";
import type { RunTokenClaims } from "./run-token";

/** A human operator of a tenant, by an operator key. */
export interface OperatorPrincipal {
  tenant: string;
  /** `operator:<key fingerprint>`: what decisions and traces record, never the key. */
  operator: string;
  /** The display name configured with the key in OPERATOR_KEYS; null when it has none. */
  name: string | null;
  /** The roles configured with the key in OPERATOR_KEYS, read on each request like the name. */
  roles: readonly string[];
}

/**
 * A signed-in operator of the console: the signed session plus their display name, read from
 * OPERATOR_KEYS on each request (not signed into the cookie), so renaming a key's holder shows at once.
 */
export type SignedInOperator = ConsoleSession & { name: string | null; roles: readonly string[] };

/**
 * Who a credential proves the caller to be, one kind per credential the proxy accepts. The tenant
 * and agent kinds are exactly what `openRunFor` takes as the opener of a run.
 */
export type Principal =
  /** A tenant key: the tenant's orchestrator, in any of its namespaces. */
  | { kind: "tenant"; tenant: string }
  /** A run token: one run, in the namespace its claims name. */
  | { kind: "run"; claims: RunTokenClaims }
  /** An agent key, or an OAuth grant for one of the tenant's agent profiles (`agent.via` says which). */
  | { kind: "agent"; agent: AgentPrincipal }
  /** An operator key, on the operator API or typed into the console's sign-in form. */
  | { kind: "operator"; operator: OperatorPrincipal }
  /** The console's session cookie. */
  | { kind: "session"; session: SignedInOperator };

export type PrincipalKind = Principal["kind"];

/**
 * What each kind of route takes, in the order a credential is tried. `named` are the kinds a route
 * recognises only to refuse them as such (403), so a misconfigured client learns why rather than
 * being told its credential is not valid.
 */
export const ACCEPTS = {
  /** `POST /v1/runs`. */
  run_opener: { kinds: ["tenant", "agent"], named: [] },
  /** The routes of one run. */
  run: { kinds: ["run"], named: [] },
  /** The operator API (`/v1/approvals`, `GET /v1/runs`, `/v1/metrics`). */
  operator: { kinds: ["operator"], named: ["run", "tenant", "agent"] },
  /** `GET /v1/tools`. */
  tool_specs: { kinds: ["run", "tenant"], named: [] },
  /** `/mcp`, where an OAuth grant stands for an agent too. */
  mcp: { kinds: ["run", "agent"], named: [] },
  /** The console's pages and forms. */
  console: { kinds: ["session"], named: [] },
  /** The console's sign-in form, which never tells a visitor that a key is some other credential. */
  sign_in: { kinds: ["operator"], named: [] },
} as const satisfies Record<
  string,
  { kinds: readonly PrincipalKind[]; named: readonly Exclude<PrincipalKind, "operator" | "session">[] }
>;

export type Accept = keyof typeof ACCEPTS;

/** The principals a route of this kind may be handed. */
export type PrincipalOf<A extends Accept> = Extract<
  Principal,
  { kind: (typeof ACCEPTS)[A]["kinds"][number] }
>;
