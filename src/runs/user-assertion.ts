import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { requestContext } from "../http/respond";
import type { Envelope } from "../wire/envelope";
import { failure } from "../wire/envelope";
import type { RunUser } from "../wire/run-user";
import { providerKeys } from "./user-keys";

/**
 * The user a run acts for, from the assertion its opener presented in `X-User-Assertion` (a JWT of
 * the tenant's identity provider): verified against the tenant's issuer, audience and keys, unexpired
 * within the tenant's clock skew. Only the opener's header names a user: no body field and no tool
 * argument can, so nothing a model sends sets or changes it.
 */
export const USER_ASSERTION_HEADER = "x-user-assertion";

export type UserAnswer = { ok: true; user: RunUser | null } | { ok: false; envelope: Envelope };

/**
 * The run's user for an open by `tenantId` with `assertion` (the header's value, if any): null when
 * none was presented and the tenant does not require one; a 401 envelope (`permission_error`) when
 * one is required and missing, or presented and not valid. `ownHost` is the proxy's own host, never
 * fetched for keys.
 */
export async function verifyUserAssertion(
  env: Env,
  tenantId: string,
  assertion: string | undefined,
  ownHost: string,
  now: number = Date.now(),
): Promise<UserAnswer> {
  const users = loadConfig(env).tenants[tenantId]?.users;
  const refuse = (message: string): UserAnswer => ({
    ok: false,
    envelope: failure(requestContext(env), {
      code: "permission_error",
      message: `${message} Nothing was opened.`,
      recommended_next_action: "escalate_to_human",
      details: { header: "X-User-Assertion" },
    }),
  });
  if (assertion === undefined || assertion.trim() === "") {
    if (users?.required)
      return refuse(
        "This tenant's runs act for a user: send X-User-Assertion, a JWT of the tenant's identity provider.",
      );
    return { ok: true, user: null };
  }
  if (!users)
    return refuse(
      "This tenant names no identity provider, so the X-User-Assertion presented cannot be verified.",
    );
  const keys = await providerKeys(env, users, ownHost);
  if (!keys)
    return refuse(
      "The identity provider's keys could not be fetched, so the user assertion cannot be verified now; try again later.",
    );
  // Loaded on first use: a run opened with no assertion never loads the verifier (jose's JWT checks).
  const { verifyAssertion } = await import("./assertion-check");
  const verified = await verifyAssertion(assertion.trim(), keys, users, now);
  if (!verified.ok) return refuse(`The user assertion was refused: ${verified.reason}.`);
  return { ok: true, user: verified.user };
}
