import { Hono } from "hono";
import * as z from "zod";
import { decideApproval, inspectApproval, listApprovals } from "../approvals/operator";
import type { Env } from "../env";
import { APPROVAL_STATES, ApprovalStateSchema, failure, success } from "../envelope";
import type { AppEnv } from "../http/app-env";
import { parseJsonBody } from "../http/json-body";
import { requireOperatorKey } from "../pipeline/authenticate";
import { requestContext, respond } from "../pipeline/respond";
import type { ApprovalDecision, ApprovalList } from "../wire/approval-answers";

/** The human gate: operators of a tenant list, inspect, approve and reject that tenant's approvals. */
export const approvals = new Hono<AppEnv>();

approvals.use(requireOperatorKey);

const DecisionBodySchema = z.strictObject({
  reason: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .optional()
    .describe("Why, in a sentence; shown to the agent on rejection."),
});
const RejectBodySchema = z.strictObject({
  reason: z
    .string()
    .trim()
    .min(1)
    .max(500)
    .describe("Why the call is rejected; the agent is told this reason."),
});

approvals.get("/", async (c) => {
  const state = ApprovalStateSchema.safeParse(c.req.query("state") ?? "pending");
  if (!state.success) {
    return respond(
      c,
      failure(requestContext(c.env), {
        code: "validation_error",
        message: "Unknown approval state.",
        problems: [
          { field: "state", reason: "not an approval state", hint: `One of: ${APPROVAL_STATES.join(", ")}.` },
        ],
      }),
    );
  }
  const list: ApprovalList = {
    state: state.data,
    approvals: await listApprovals(c.env, c.get("tenant"), state.data),
  };
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
  approvals.post(`/:id/${decision}`, async (c) => {
    const parsed = parseJsonBody(
      await c.req.text(),
      decision === "approve" ? DecisionBodySchema : RejectBodySchema,
    );
    if (!parsed.ok) {
      return respond(
        c,
        failure(requestContext(c.env), {
          code: "validation_error",
          message: "The decision body is invalid.",
          problems: parsed.problems,
        }),
      );
    }
    const result = await decideApproval(c.env, {
      tenant: c.get("tenant"),
      operator: c.get("operator"),
      approvalId: c.req.param("id"),
      decision,
      reason: parsed.value.reason ?? null,
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
  });
}
