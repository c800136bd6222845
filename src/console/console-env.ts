import type { Env } from "../env";
import type { ConsoleSession } from "./session";

/** Hono's typing of the console: the proxy's bindings plus the signed-in operator's session. */
export interface ConsoleEnv {
  Bindings: Env;
  Variables: {
    session: ConsoleSession;
  };
}
