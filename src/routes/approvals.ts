import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import * as z from "zod";
import { decideApproval, inspectApproval, listApprovals } from "../approvals/operator";
import type { Env } from "../env";
import { APPROVAL_STATES, ApprovalStateSchema, failure, success } from "../envelope";
import type { AppEnv } from "../http/app-env";
import { limitJsonBody } from "../http/limits";
import { tooLarge } from "../http/too-large";
import { jsonBody, validated } from "../http/validation-hook";
import { requireOperatorKey } from "../pipeline/authenticate";
import { requestContext, respond } from "../pipeline/respond";
import type { ApprovalDecision, ApprovalList } from "../wire/approval-answers";

/** The human gate: operators of a tenant list, inspect, approve and reject that tenant's approvals. */
export const approvals = new Hono<AppEnv>();

approvals.use(requireOperatorKey);

/** A decision body is a sentence at most; anything near this size is not one. */
const MAX_DECISION_BODY_BYTES = 8 * 1024;

export const DecisionBodySchema = z.strictObject({
  reason: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .optional()
    .describe("Why, in a sentence; shown to the agent on rejection."),
});
export const RejectBodySchema = z.strictObject({
  reason: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .describe("Why the call is rejected; the agent is told this reason."),
});

/** `GET /v1/approvals?state=`: which of the tenant's approvals to list. */
export const ApprovalsQuerySchema = z.strictObject({
  state: ApprovalStateSchema.default("pending").describe(
    `The state of the approvals to list: ${APPROVAL_STATES.join(", ")}; pending when omitted.`,
  ),
});

approvals.get("/", validated("query", ApprovalsQuerySchema), async (c) => {
  const { state } = c.req.valid("query");
  const list: ApprovalList = { state, approvals: await listApprovals(c.env, c.get("tenant"), state) };
  return respond(c, success(requestContext(c.env), list));
});

const notFound = (env: Env) =>
  failure(requestContext(env), {
    code: "not_found",
    message: "No such approval for this tenant.",
    recommended_next_action: "stop",
  });

approvals.get("/:id", async (c) => {
  const found = await inspectApproval(c.env, c.get("tenant"), c.req.param("id"));
  if (!found) return respond(c, notFound(c.env));
  return respond(c, success(requestContext(c.env), found));
});

for (const decision of ["approve", "reject"] as const) {
  approvals.post(
    `/:id/${decision}`,
    bodyLimit({ maxSize: MAX_DECISION_BODY_BYTES, onError: tooLarge(MAX_DECISION_BODY_BYTES) }),
    limitJsonBody("object"),
    jsonBody,
    validated("json", decision === "approve" ? DecisionBodySchema : RejectBodySchema),
    async (c) => {
      const result = await decideApproval(c.env, {
        tenant: c.get("tenant"),
        operator: c.get("operator"),
        approvalId: c.req.param("id"),
        decision,
        reason: c.req.valid("json").reason ?? null,
      });
      if (!result.ok) {
        if (result.code === "not_found") return respond(c, notFound(c.env));
        return respond(
          c,
          failure(requestContext(c.env), {
            code: "conflict_error",
            message: result.message,
            details: { approval: result.approval },
            recommended_next_action: "stop",
          }),
        );
      }
      const decided: ApprovalDecision = { approval: result.approval };
      return respond(c, success(requestContext(c.env), decided));
    },
  );
}
