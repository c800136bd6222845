import type { RunTokenClaims } from "../auth/run-token";
import type { Env } from "../env";

/** Hono's typing of this app: bindings plus what authentication establishes. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    tenant: string;
    claims: RunTokenClaims;
    /** `operator:<key fingerprint>`: who decided, without ever recording the key. */
    operator: string;
  };
}
