import type { AgentPrincipal } from "../auth/agent-keys";
import { signToken, verifyToken } from "../auth/signed-token";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import type { Problem } from "../wire/envelope";
import { type SessionClaims, SessionClaimsSchema } from "./session";

/**
 * A run handle: how an agent on the 2026-07-28 revision (no sessions) names its run. `start_task`
 * opens a run and answers with one; every later `tools/call` carries it as the `run_handle`
 * argument. It is signed like a session id, under its own prefix so neither passes for the other,
 * and names tenant, agent profile, run and namespace: the model can only repeat a handle the
 * proxy minted for this agent, never point a call at another run. Alone it opens nothing: the
 * request must also carry an agent key (or OAuth token) of the same tenant and profile.
 */

const PREFIX = "rh1";

/** The argument every tool of an agent's 2026-07-28 listing takes besides its own. */
export const RUN_HANDLE_ARG = "run_handle";

export type RunHandleClaims = SessionClaims;

export function signRunHandle(env: Env, claims: RunHandleClaims): Promise<string> {
  return signToken(PREFIX, claims, loadConfig(env).runTokenKeys);
}

export type RunHandleCheck =
  | { ok: true; claims: RunHandleClaims; args: Record<string, unknown> }
  | { ok: false; code: "validation_error" | "permission_error"; message: string; problems: Problem[] };

/**
 * The run a call's arguments name, and the arguments without the handle: the tool's own arguments
 * are what is validated and what the idempotency key is derived from, so the key never depends on
 * the handle's bytes. Whether the run is still live is the ledger's to say, as for any run token.
 */
export async function takeRunHandle(
  env: Env,
  agent: AgentPrincipal,
  args: Record<string, unknown>,
): Promise<RunHandleCheck> {
  const { [RUN_HANDLE_ARG]: handle, ...rest } = args;
  if (typeof handle !== "string" || handle === "") {
    return {
      ok: false,
      code: "validation_error",
      message: "Every call names its run: pass the run_handle that start_task returned.",
      problems: [
        {
          field: RUN_HANDLE_ARG,
          reason: handle === undefined ? "missing required field" : "expected a non-empty string",
          hint: "Call start_task once for the task, then pass its run_handle to every other tool.",
        },
      ],
    };
  }
  const verified = await verifyToken(PREFIX, handle, loadConfig(env).runTokenKeys, (value) => {
    const parsed = SessionClaimsSchema.safeParse(value);
    return parsed.success ? parsed.data : null;
  });
  if (verified.ok && verified.payload.tenant === agent.tenant && verified.payload.profile === agent.profile) {
    return { ok: true, claims: verified.payload, args: rest };
  }
  // Forged, altered, another agent's or another tenant's: all answered alike, naming nothing.
  const expired = !verified.ok && verified.reason === "expired";
  return {
    ok: false,
    code: "permission_error",
    message: expired
      ? "This run_handle has expired with its run. Call start_task for a new run and use its run_handle."
      : "This run_handle was not issued to this agent (forged, altered, or another agent's). Use the run_handle start_task returned to you.",
    problems: [
      {
        field: RUN_HANDLE_ARG,
        reason: expired ? "expired" : "not a run handle of this agent",
        hint: "Pass the run_handle start_task returned, unchanged.",
      },
    ],
  };
}
