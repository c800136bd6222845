import type { Env } from "../env";
import type { EnvironmentName } from "../wire/envelope";

/**
 * The environment's name, from `ENVIRONMENT` alone. Unlike `loadConfig` it never throws: a proxy
 * whose secrets are missing or malformed must still say which environment refuses, and anything
 * other than "production" is treated as the sandbox, the environment that can do no real harm.
 */
export function environmentOf(env: Env): EnvironmentName {
  return env.ENVIRONMENT === "production" ? "production" : "sandbox";
}
