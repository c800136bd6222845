import type { RunTokenClaims } from "../auth/run-token";
import type { Env } from "../env";
import type { RunOpener } from "../runs/open-run";

/** Hono's typing of this app: bindings plus what authentication establishes. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    tenant: string;
    claims: RunTokenClaims;
    /** `operator:<key fingerprint>`: who decided, without ever recording the key. */
    operator: string;
    /** The operator's display name, configured with their key in OPERATOR_KEYS; null when it has none. */
    operator_name: string | null;
    /** The roles configured with the operator's key in OPERATOR_KEYS. */
    operator_roles: readonly string[];
    /** A JSON body as `limitJsonBody` parsed it, so a route never parses the same text twice. */
    json_body: { value: unknown };
    /** Who may open a run on `POST /v1/runs`: the tenant key's orchestrator or an agent key. */
    opener: RunOpener;
  };
}
