import type { Env } from "../env";
import type { ConsoleSession } from "./session";

/**
 * A signed-in operator: the signed session plus their display name, read from OPERATOR_KEYS on each
 * request (not signed into the cookie), so renaming a key's holder shows at once.
 */
export type SignedInOperator = ConsoleSession & { name: string | null };

/** Hono's typing of the console: the proxy's bindings plus the signed-in operator's session. */
export interface ConsoleEnv {
  Bindings: Env;
  Variables: {
    session: SignedInOperator;
  };
}
