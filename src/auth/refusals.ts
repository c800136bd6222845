import type { Accept } from "./principal";

/** Why a credential was refused: the one list every route's answer is drawn from. */
export type RefusalReason =
  /** No credential at all. */
  | "missing"
  /** Not a credential of any kind the route takes (a run route: not shaped like a run token). */
  | "unknown"
  /** A run token signed with no current key. */
  | "bad_signature"
  /** A run token past its expiry. */
  | "expired"
  /** A valid run token of another run than the route's. */
  | "other_run"
  /** An OAuth grant for an agent profile that no longer exists. */
  | "stale_grant"
  /** Valid credentials of machines, on a route for humans. */
  | "run_token_as_operator"
  | "tenant_key_as_operator"
  | "agent_key_as_operator";

export interface Refusal {
  reason: RefusalReason;
  /** 401: who are you? 403: a credential the proxy knows, which may not do this. */
  status: 401 | 403;
  message: string;
}

const AS_OPERATOR = "cannot act as an operator; approvals need a human's operator key.";
const RUN_TOKEN_NOT_VALID = "The run token is not valid.";
/** The sign-in form says one thing for every refused key, so it never confirms a guess is some other credential. */
const NOT_AN_OPERATOR_KEY = "That is not an operator key of any tenant. Check the key and try again.";

/**
 * What a caller is told, by reason, and for the reasons whose words depend on what the route takes,
 * by route. A console page never shows these (it sends the browser to sign in); they say why in a log.
 */
const REFUSALS: Record<RefusalReason, { status: 401 | 403; message: string | Record<Accept, string> }> = {
  missing: {
    status: 401,
    message: {
      run_opener: "This route needs a tenant key or an agent key: Authorization: Bearer <key>.",
      run: "This route needs the run's token: Authorization: Bearer <run token>.",
      operator: "This route needs an operator key: Authorization: Bearer <operator key>.",
      tool_specs: "This route needs a tenant key or a run token: Authorization: Bearer <key>.",
      mcp: "/mcp needs a credential: Authorization: Bearer <agent key>, or <run token> from POST /v1/runs.",
      console: "The console needs a session: sign in with an operator key.",
      sign_in: NOT_AN_OPERATOR_KEY,
    },
  },
  unknown: {
    status: 401,
    message: {
      run_opener: "The tenant key or agent key is not valid.",
      run: RUN_TOKEN_NOT_VALID,
      operator: "The operator key is not valid.",
      tool_specs: "The tenant key or run token is not valid.",
      mcp: "The bearer is neither a run token nor an agent key. Use an agent key, or open a run with POST /v1/runs and use its run_token.",
      console: "The console session is forged or expired, or its operator key was removed; sign in again.",
      sign_in: NOT_AN_OPERATOR_KEY,
    },
  },
  bad_signature: { status: 401, message: RUN_TOKEN_NOT_VALID },
  expired: { status: 401, message: "The run token has expired; open a new run." },
  other_run: { status: 403, message: "This run token belongs to another run." },
  stale_grant: {
    status: 401,
    message: "The OAuth grant names an agent profile that no longer exists; authorize again.",
  },
  run_token_as_operator: { status: 403, message: `A run token ${AS_OPERATOR}` },
  tenant_key_as_operator: { status: 403, message: `A tenant key ${AS_OPERATOR}` },
  agent_key_as_operator: { status: 403, message: `An agent key ${AS_OPERATOR}` },
};

/** The refusal a route of kind `accept` answers for `reason`. */
export function refusal(reason: RefusalReason, accept: Accept): Refusal {
  const { status, message } = REFUSALS[reason];
  return { reason, status, message: typeof message === "string" ? message : message[accept] };
}
