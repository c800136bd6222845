import type { Env } from "../env";
import type { EnvironmentName } from "../wire/envelope";

/**
 * The environment's name, from `ENVIRONMENT` alone. Unlike `loadConfig` it never throws: a proxy
 * whose secrets are missing or malformed must still say which environment refuses, and anything
 * other than "production" is treated as the sandbox, the environment that can do no real harm.
 * Takes any bindings object, so code that sees the environment only as bindings can ask too.
 */
export function environmentOf(env: Pick<Env, "ENVIRONMENT"> | object): EnvironmentName {
  return (env as Partial<Pick<Env, "ENVIRONMENT">>).ENVIRONMENT === "production" ? "production" : "sandbox";
}
