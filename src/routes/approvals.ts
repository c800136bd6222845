import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as z from "zod";
import { decisionAnswer } from "../approvals/decision-answer";
import { ApprovalFiltersSchema } from "../approvals/list-filters";
import type { Env } from "../env";
import type { AppEnv } from "../http/app-env";
import { requireOperatorKey } from "../http/authenticate";
import { limitJsonBody } from "../http/limits";
import { requestContext, respond } from "../http/respond";
import { tooLarge } from "../http/too-large";
import { jsonBody, validated } from "../http/validation-hook";
import { decideApproval, inspectApproval, listApprovals } from "../ledger/operator-client";
import { APPROVAL_ID, defineOperation, envelope, FAILURES, routeOf } from "../specs/operation";
import type { ApprovalList } from "../wire/approval-answers";
import { failure, success } from "../wire/envelope";

/** The human gate: operators of a tenant list, inspect, approve and reject that tenant's approvals. */
export const approvals = new Hono<AppEnv>();

approvals.use(requireOperatorKey);

/** Where `approvals` is mounted (src/app.ts). */
const MOUNT = "/v1/approvals";

/** A decision body is a sentence at most; anything near this size is not one. */
const MAX_DECISION_BODY_BYTES = 8 * 1024;

/** What the deciding operator saw, in the audit's words: the digest the approval page showed. */
const ContextDigestSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "not a SHA-256 digest (64 lowercase hex digits)")
  .optional()
  .describe(
    "The SHA-256 of the decision context the operator saw (the console sends the digest of the facts its page showed); recorded on the decision's audit receipt.",
  );

export const DecisionBodySchema = z.strictObject({
  reason: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .optional()
    .describe("Why, in a sentence; shown to the agent on rejection."),
  confirm_duplicate: z
    .boolean()
    .default(false)
    .describe(
      "Approve although another run of the tenant has the same destructive call pending or executed (the approval's `duplicates`), or the edited call acts on a business thing another run already acted on; without it such an approval is refused with a conflict_error naming them.",
    ),
  args: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      "Approve these arguments instead of the ones asked for (approve with edit): the complete arguments of the tool, checked like an agent's call (schema, policy, caps). The approval then binds them, the edited call is what executes, and the agent's resend of its own call is answered with it. An edit that needs a higher role or a second approver gets it.",
    ),
  context_digest: ContextDigestSchema,
});
export const RejectBodySchema = z.strictObject({
  reason: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .describe("Why the call is rejected; the agent is told this reason."),
  context_digest: ContextDigestSchema,
});

/** Whether a decision body confirms approving a call another run already asked for (approvals only). */
function confirmsDuplicate(body: object): boolean {
  return "confirm_duplicate" in body && body.confirm_duplicate === true;
}

/** The arguments an approval body approves instead of the asked ones (approvals only). */
function editedArgs(body: object): Record<string, unknown> | null {
  return "args" in body && body.args !== undefined ? (body.args as Record<string, unknown>) : null;
}

/** `GET /v1/approvals?state=&tool=&subject=&run_id=&since=&until=&cursor=&limit=`: one page of history. */
export const LIST_APPROVALS = defineOperation({
  method: "get",
  path: "/v1/approvals",
  tag: "approvals",
  summary: "List and search approvals",
  description:
    "One page of the tenant's approvals, newest first: by state (default pending, or all), tool, subject (an id from the arguments: `A1002`, or `order_id=A1002`), run and creation time. Pass `next_cursor` back as `cursor`, with the same filters, for the next page.",
  credentials: ["operatorKey"],
  query: () => ApprovalFiltersSchema,
  responses: {
    "200": envelope("One page of approvals.", "ApprovalList"),
    "401": FAILURES["401"],
    "403": FAILURES["403"],
    "422": envelope(
      "An unknown state or parameter, a bad date or cursor, or a limit out of range (`validation_error`).",
    ),
  },
});

approvals.on(
  LIST_APPROVALS.method,
  routeOf(LIST_APPROVALS, MOUNT),
  validated("query", LIST_APPROVALS.query),
  async (c) => {
    const filters = c.req.valid("query");
    const page = await listApprovals(c.env, c.get("tenant"), filters);
    const list: ApprovalList = { state: filters.state, ...page };
    return respond(c, success(requestContext(c.env), list));
  },
);

const notFound = (env: Env) =>
  failure(requestContext(env), {
    code: "not_found",
    message: "No such approval for this tenant.",
    recommended_next_action: "stop",
  });

export const APPROVAL = defineOperation({
  method: "get",
  path: "/v1/approvals/{id}",
  tag: "approvals",
  summary: "One approval",
  description: "The approval with its run and the run's trace, so an operator decides with context.",
  credentials: ["operatorKey"],
  parameters: [APPROVAL_ID],
  responses: {
    "200": envelope("The approval, run and trace.", "ApprovalDetail"),
    "401": FAILURES["401"],
    "404": FAILURES["404"],
  },
});

approvals.on(APPROVAL.method, routeOf(APPROVAL, MOUNT), async (c) => {
  const found = await inspectApproval(c.env, c.get("tenant"), c.req.param("id"));
  if (!found) return respond(c, notFound(c.env));
  return respond(c, success(requestContext(c.env), found));
});

/** Approving and rejecting: one operation each, the same route but for the body's schema. */
const decisionOperation = <const D extends "approve" | "reject">(decision: D) =>
  defineOperation({
    method: "post",
    path: `/v1/approvals/{id}/${decision}`,
    tag: "approvals",
    summary: decision === "approve" ? "Approve a call" : "Reject a call",
    description:
      decision === "approve"
        ? 'Approves the held call; the agent\'s next identical call executes it exactly once. Body `{ "reason"?: string }`.'
        : 'Rejects the held call; the agent is told the reason. Body `{ "reason": string }`.',
    credentials: ["operatorKey"],
    parameters: [APPROVAL_ID],
    responses: {
      "200": envelope(
        'The decided approval; one that needs two approvers stays `pending` after the first approval ("1 of 2": its `approvers`).',
        "ApprovalDecision",
      ),
      "401": FAILURES["401"],
      "403": envelope(
        "The operator's key holds none of the approval's `approver_roles` (`permission_error`, `details.roles` names them); or a credential that is not an operator key.",
      ),
      "404": FAILURES["404"],
      "409": envelope(
        "Already decided or expired, or already approved by the same person (`conflict_error`).",
      ),
      "422": envelope("Invalid body."),
      ...(decision === "approve"
        ? {
            "502": envelope(
              "Approved, but the call did not execute: the upstream refused it, the proxy did not send it (a remote tool that drifted from its pin: `upstream_changed`), or whether it acted is unknown. The error is the call's own (its code, `side_effect_confirmed`), `details.execution` says which (`refused`, `not_sent`, `in_doubt`), and `data` is the decided approval as a 200 would carry it.",
              "ApprovalDecision",
            ),
          }
        : {}),
    },
  });

export const DECISIONS = { approve: decisionOperation("approve"), reject: decisionOperation("reject") };

for (const decision of ["approve", "reject"] as const) {
  const operation = DECISIONS[decision];
  approvals.on(
    operation.method,
    routeOf(operation, MOUNT),
    bodyLimit({ maxSize: MAX_DECISION_BODY_BYTES, onError: tooLarge(MAX_DECISION_BODY_BYTES) }),
    limitJsonBody("object"),
    jsonBody,
    validated("json", decision === "approve" ? DecisionBodySchema : RejectBodySchema),
    async (c) => {
      const result = await decideApproval(c.env, {
        tenant: c.get("tenant"),
        operator: c.get("operator"),
        operator_name: c.get("operator_name"),
        operator_roles: c.get("operator_roles"),
        approvalId: c.req.param("id"),
        decision,
        reason: c.req.valid("json").reason ?? null,
        confirm_duplicate: confirmsDuplicate(c.req.valid("json")),
        args: editedArgs(c.req.valid("json")),
        context_digest: c.req.valid("json").context_digest ?? null,
      });
      if (!result.ok) {
        if (result.code === "not_found") return respond(c, notFound(c.env));
        if (result.code === "edit_refused") {
          // The edited arguments broke the tool's schema or policy: each problem names its field under `args`.
          const { refusal } = result;
          return respond(
            c,
            failure(requestContext(c.env), {
              ...refusal,
              problems: refusal.problems?.map((problem) => ({ ...problem, field: `args.${problem.field}` })),
              details: { reason: "edit_refused", approval: result.approval },
              recommended_next_action: "fix_arguments",
            }),
          );
        }
        if (result.code === "permission_error") {
          // 403: this operator may not decide it; the roles that may are named.
          return respond(
            c,
            failure(requestContext(c.env), {
              code: "permission_error",
              message: result.message,
              details: { reason: "role_required", roles: result.roles, approval: result.approval },
              recommended_next_action: "escalate_to_human",
            }),
          );
        }
        if (result.code === "duplicate_unconfirmed") {
          return respond(
            c,
            failure(requestContext(c.env), {
              code: "conflict_error",
              message: result.message,
              details: {
                reason: "duplicate_unconfirmed",
                approval: result.approval,
                duplicates: result.duplicates,
              },
              recommended_next_action: "reconcile",
            }),
          );
        }
        return respond(
          c,
          failure(requestContext(c.env), {
            code: "conflict_error",
            message: result.message,
            details: {
              approval: result.approval,
              ...("reason" in result && result.reason ? { reason: result.reason } : {}),
            },
            recommended_next_action: "stop",
          }),
        );
      }
      // The decision stands; when its call did not execute, the answer says so (502: the call behind it failed).
      const answer = decisionAnswer(requestContext(c.env), result.approval, result.call ?? null);
      return respond(c, answer, answer.error ? { status: 502 } : {});
    },
  );
}
