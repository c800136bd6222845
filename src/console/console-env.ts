import type { SignedInOperator } from "../auth/principal";
import type { Env } from "../env";

/** Hono's typing of the console: the proxy's bindings plus the signed-in operator's session. */
export interface ConsoleEnv {
  Bindings: Env;
  Variables: {
    session: SignedInOperator;
    /** Origins a page's form answer may redirect to, beside this one (the consent page's client). */
    formTargets?: readonly string[];
  };
}
