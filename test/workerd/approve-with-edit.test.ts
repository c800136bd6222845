import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../src/wire/approval";
import {
  ACME_OPERATORS,
  askAcmeRefund,
  asOperator,
  callTool,
  openRun,
  refund,
  refundsOf,
  refundsOfRun,
  request,
  traceOf,
} from "./helpers";

/**
 * Approve with edit (acme in wrangler.toml): an operator changes a refund's arguments before
 * approving it. issue_refund names support_lead, acme raises it to finance_lead above 20000 cents
 * and asks two different operators above 30000, and refuses refunds above 50000 by policy.
 */

type Operator = keyof typeof ACME_OPERATORS;

function approveAs(who: Operator, id: string, args: unknown, extra: Record<string, unknown> = {}) {
  return request(`/v1/approvals/${id}/approve`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACME_OPERATORS[who]}`, "content-type": "application/json" },
    body: JSON.stringify({ reason: "the customer asked for less", confirm_duplicate: true, args, ...extra }),
  });
}

async function approvalOf(id: string, tenant: "acme" | "hooli" = "acme"): Promise<ApprovalRecord> {
  const { body } =
    tenant === "acme"
      ? await request(`/v1/approvals/${id}`, { headers: { authorization: `Bearer ${ACME_OPERATORS.riley}` } })
      : await asOperator(`/v1/approvals/${id}`, {}, "hooli");
  return (body.data as { approval: ApprovalRecord }).approval;
}

describe("approve with edit", () => {
  it("executes the edited call once, and answers the agent's resend of its own call with it", async () => {
    const { run, id } = await askAcmeRefund("A1003", 900);
    const asked = await approvalOf(id);

    const approved = await approveAs("riley", id, refund("A1003", 600));
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    const approval = (approved.body.data as { approval: ApprovalRecord }).approval;
    expect(approval).toMatchObject({
      state: "executed",
      args: refund("A1003", 600),
      edit: {
        asked_args: refund("A1003", 900),
        asked_key: asked.idempotency_key,
        fields: ["amount_cents"],
        by_name: "Riley Chen",
      },
    });
    expect(approval.idempotency_key).not.toBe(asked.idempotency_key);
    expect(approval.args_digest).not.toBe(asked.args_digest);
    const refunds = await refundsOfRun("A1003", run);
    expect(refunds.map((made) => made.amount_cents)).toEqual([600]);

    // The agent resends what it asked for: the edited call's result, replayed; nothing more runs.
    const resent = await callTool(run, "issue_refund", refund("A1003", 900));
    expect(resent.body.outcome, JSON.stringify(resent.body.error)).toBe("success");
    expect(resent.body).toMatchObject({
      replayed: true,
      idempotency_key: approval.idempotency_key,
      data: { amount_cents: 600 },
      approval: {
        id,
        state: "executed",
        edit: {
          asked_args: refund("A1003", 900),
          approved_args: refund("A1003", 600),
          fields: ["amount_cents"],
          by_name: "Riley Chen",
        },
      },
    });
    // The edited arguments, called directly, are that same call.
    const direct = await callTool(run, "issue_refund", refund("A1003", 600));
    expect(direct.body).toMatchObject({ outcome: "success", replayed: true });
    expect((await refundsOfRun("A1003", run)).map((made) => made.amount_cents)).toEqual([600]);

    // The trace names who changed what on the call the approval executed.
    const executed = (await traceOf(run)).find((entry) => String(entry.actor).startsWith("operator:"));
    expect(executed).toMatchObject({
      args: refund("A1003", 600),
      outcome: "success",
      edit: { asked_args: refund("A1003", 900), fields: ["amount_cents"], by_name: "Riley Chen" },
    });
  });

  it("refuses an edit outside the schema or the policy, naming the field, and executes nothing", async () => {
    const { run, id } = await askAcmeRefund("A1001", 900);
    const cases: Array<[unknown, number, string, string]> = [
      [
        { ...refund("A1001", 900), amount_cents: "six hundred" },
        422,
        "validation_error",
        "args.amount_cents",
      ],
      [{ ...refund("A1001", 900), note: "extra" }, 422, "validation_error", "args.note"],
      [{ order_id: "A1001", amount_cents: 600 }, 422, "validation_error", "args.reason"],
      [refund("A1001", 60_000), 403, "permission_error", "args.amount_cents"],
      [refund("Z9999", 600), 403, "permission_error", "args.order_id"],
    ];
    for (const [args, status, code, field] of cases) {
      const refused = await approveAs("dana", id, args);
      expect(refused.status, JSON.stringify(args)).toBe(status);
      expect(refused.body.error?.code).toBe(code);
      expect(refused.body.error?.problems.map((problem) => problem.field)).toContain(field);
      expect(refused.body.error?.details).toMatchObject({ reason: "edit_refused" });
    }
    const notAnObject = await approveAs("dana", id, ["A1001"]);
    expect(notAnObject.status).toBe(422);
    expect(await approvalOf(id)).toMatchObject({ state: "pending", args: refund("A1001", 900), edit: null });
    expect(await refundsOfRun("A1001", run)).toHaveLength(0);
  });

  it("gives an edit that needs a higher role that role, and a second approver when it needs two", async () => {
    const { run, id } = await askAcmeRefund("A1004", 15_000);
    expect(await approvalOf(id)).toMatchObject({ approver_roles: ["support_lead"], approvals_required: 1 });

    // Riley may approve the refund as asked, not an edit that raises it above finance_lead's threshold.
    const raised = await approveAs("riley", id, refund("A1004", 25_000));
    expect(raised.status).toBe(403);
    expect(raised.body.error).toMatchObject({
      code: "permission_error",
      details: { roles: ["finance_lead"] },
    });
    expect(raised.body.error?.message).toContain("approve this edit");
    expect(await approvalOf(id)).toMatchObject({ state: "pending", args: refund("A1004", 15_000) });

    // Above the two-person threshold: Dana's edit is the first of two approvals; nothing runs yet.
    const first = await approveAs("dana", id, refund("A1004", 35_000));
    expect(first.status, JSON.stringify(first.body.error)).toBe(200);
    expect((first.body.data as { approval: ApprovalRecord }).approval).toMatchObject({
      state: "pending",
      args: refund("A1004", 35_000),
      approver_roles: ["finance_lead"],
      approvals_required: 2,
      approvers: [expect.objectContaining({ name: "Dana Reyes" })],
      edit: { asked_args: refund("A1004", 15_000), fields: ["amount_cents"], by_name: "Dana Reyes" },
    });
    expect(await refundsOfRun("A1004", run)).toHaveLength(0);
    // The agent, resending its own call, waits for the edited one and is told what changed.
    const waiting = await callTool(run, "issue_refund", refund("A1004", 15_000));
    expect(waiting.body.error?.code).toBe("approval_required");
    expect(waiting.body.approval?.edit).toMatchObject({ approved_args: refund("A1004", 35_000) });
    // Dana's second key is the same person.
    expect((await approveAs("dana_second_key", id, refund("A1004", 35_000))).status).toBe(409);

    const second = await approveAs("lee", id, refund("A1004", 35_000));
    expect(second.status, JSON.stringify(second.body.error)).toBe(200);
    expect((second.body.data as { approval: ApprovalRecord }).approval.state).toBe("executed");
    expect((await refundsOfRun("A1004", run)).map((made) => made.amount_cents)).toEqual([35_000]);
  });

  it("never lowers who approves: an edit down from a finance lead's amount still needs one", async () => {
    const { run, id } = await askAcmeRefund("A1001", 25_000);
    const lowered = await approveAs("riley", id, refund("A1001", 5_000));
    expect(lowered.status).toBe(403);
    expect(await refundsOfRun("A1001", run)).toHaveLength(0);
    const approved = await approveAs("lee", id, refund("A1001", 5_000));
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    expect((await refundsOfRun("A1001", run)).map((made) => made.amount_cents)).toEqual([5_000]);
  });

  it("holds an edit back down to the call as asked, not to the edit it replaces", async () => {
    const { run, id } = await askAcmeRefund("A1002", 900);
    // Dana raises it above the two-person threshold: the first of two finance leads.
    const raised = await approveAs("dana", id, refund("A1002", 35_000));
    expect(raised.status, JSON.stringify(raised.body.error)).toBe(200);
    expect(await approvalOf(id)).toMatchObject({ approver_roles: ["finance_lead"], approvals_required: 2 });
    // While it asks for a finance lead, a support lead may not act on it, not even to lower it.
    expect((await approveAs("riley", id, refund("A1002", 900))).status).toBe(403);
    // Dana takes it back to $9.00: one support lead, as the call as asked needed; hers is enough.
    const lowered = await approveAs("dana", id, refund("A1002", 900));
    expect(lowered.status, JSON.stringify(lowered.body.error)).toBe(200);
    expect((lowered.body.data as { approval: ApprovalRecord }).approval).toMatchObject({
      state: "executed",
      approver_roles: ["support_lead"],
      approvals_required: 1,
    });
    expect((await refundsOfRun("A1002", run)).map((made) => made.amount_cents)).toEqual([900]);
  });

  it("refuses an edit of an approval another operator already approved as asked, and sends nothing more", async () => {
    const { run, id } = await askAcmeRefund("A1004", 800);
    expect((await approveAs("riley", id, refund("A1004", 800))).status).toBe(200);
    // Sent a moment later, as a race with the plain approval: the edit is not what went out.
    const late = await approveAs("dana", id, refund("A1004", 500));
    expect(late.status).toBe(409);
    expect(late.body.error?.code).toBe("conflict_error");
    expect(late.body.error?.message).toContain("your edit was not applied");
    expect(await approvalOf(id)).toMatchObject({ state: "executed", args: refund("A1004", 800), edit: null });
    expect((await refundsOfRun("A1004", run)).map((made) => made.amount_cents)).toEqual([800]);
    // The same arguments again are the same decision: nothing to refuse.
    expect((await approveAs("dana", id, refund("A1004", 800))).status).toBe(200);
  });

  it("refuses an edit into another call this run already made, and treats its own arguments as a plain approval", async () => {
    const run = await openRun("acme");
    const one = await callTool(run, "issue_refund", refund("A1002", 700));
    const two = await callTool(run, "issue_refund", refund("A1002", 800));
    const first = one.body.approval?.id ?? "";
    const clash = await approveAs("dana", two.body.approval?.id ?? "", refund("A1002", 700));
    expect(clash.status).toBe(409);
    expect(clash.body.error?.message).toContain("another call of this run");
    expect(await refundsOfRun("A1002", run)).toHaveLength(0);

    const same = await approveAs("dana", first, refund("A1002", 700));
    expect(same.status).toBe(200);
    expect((same.body.data as { approval: ApprovalRecord }).approval).toMatchObject({
      state: "executed",
      edit: null,
    });
    expect((await refundsOfRun("A1002", run)).map((made) => made.amount_cents)).toEqual([700]);
  });
});

/**
 * Tenant hooli (wrangler.toml): refunds above 1000 cents wait for a human; `issue_refund` names its
 * effect by `order_id` and moves `amount_cents` USD, capped at 4000 a run and 2500 an order a day.
 */
describe("approve with edit, across runs", () => {
  const hooliApprove = (id: string, args: unknown, confirm: boolean) =>
    asOperator(
      `/v1/approvals/${id}/approve`,
      { method: "POST", body: JSON.stringify({ args, confirm_duplicate: confirm }) },
      "hooli",
    );

  it("claims the edited value in place of the asked one, and releases the asked one", async () => {
    const run = await openRun("hooli", { namespace: "support", limits: { max_destructive: 10 } });
    const asked = await callTool(run, "issue_refund", refund("H0181", 2400));
    expect(asked.body.error?.code).toBe("approval_required");
    // 2400 asked and 2000 edited would be 4400 on one order (cap 2500): only one of them counts.
    const approved = await hooliApprove(asked.body.approval?.id ?? "", refund("H0181", 2000), false);
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    expect((await refundsOfRun("H0181", run)).map((made) => made.amount_cents)).toEqual([2000]);
    // The run's cap (4000) now holds 2000: the asked 2400 was given back, so 1000 more is auto-approved.
    const next = await callTool(run, "issue_refund", refund("H0182", 1000));
    expect(next.body.outcome, JSON.stringify(next.body.error)).toBe("success");
  });

  it("lets an edit stay over a cap the call as asked went over, and refuses one over a cap it fitted", async () => {
    const run = await openRun("hooli", { namespace: "support", limits: { max_destructive: 10 } });
    // 2600 on one order is over its 2500 a day: the approval shows it, so an edit to 2550 may stand.
    const over = await callTool(run, "issue_refund", refund("H0171", 2600));
    const overId = over.body.approval?.id ?? "";
    expect((await approvalOf(overId, "hooli")).limit).toMatchObject({ cap: "per_subject_day", amount: 2600 });
    const edited = await hooliApprove(overId, refund("H0171", 2550), false);
    expect(edited.status, JSON.stringify(edited.body.error)).toBe(200);
    expect((edited.body.data as { approval: ApprovalRecord }).approval).toMatchObject({
      state: "executed",
      limit: { cap: "per_subject_day", amount: 2550 },
      edit: { asked_limit: { cap: "per_subject_day", amount: 2600 }, fields: ["amount_cents"] },
    });
    expect((await refundsOfRun("H0171", run)).map((made) => made.amount_cents)).toEqual([2550]);

    // In a run of its own, 2000 on another order fits; an edit to 2600 would not, which the operator
    // was never shown.
    const fits = await callTool(await openRun("hooli"), "issue_refund", refund("H0172", 2000));
    const fitsId = fits.body.approval?.id ?? "";
    const refused = await hooliApprove(fitsId, refund("H0172", 2600), false);
    expect(refused.status).toBe(409);
    expect(refused.body.error?.details).toMatchObject({ reason: "edit_over_cap" });
    expect(refused.body.error?.message).toContain(
      "which the approval did not show the call as asked exceeding",
    );
    expect(await approvalOf(fitsId, "hooli")).toMatchObject({ state: "pending", edit: null, limit: null });
    expect(await refundsOf("H0172")).toEqual([]);

    // 2600 on a third order is over its day's 2500, not over the run's 4000: an edit to 4500 is over
    // the run's cap, which the approval never showed, so it is refused too.
    const dayOnly = await callTool(
      await openRun("hooli", { namespace: "support", limits: { max_destructive: 10 } }),
      "issue_refund",
      refund("H0173", 2600),
    );
    const dayOnlyId = dayOnly.body.approval?.id ?? "";
    expect((await approvalOf(dayOnlyId, "hooli")).limit).toMatchObject({ cap: "per_subject_day" });
    const otherCap = await hooliApprove(dayOnlyId, refund("H0173", 4500), false);
    expect(otherCap.status).toBe(409);
    expect(otherCap.body.error?.details).toMatchObject({ reason: "edit_over_cap" });
    expect(otherCap.body.error?.message).toContain("per_run");
    expect(await refundsOf("H0173")).toEqual([]);
  });

  it("asks for confirmation when the edit moves the call onto a thing another run acted on", async () => {
    const other = await openRun("hooli");
    expect((await callTool(other, "issue_refund", refund("H0191", 700))).body.outcome).toBe("success");
    const run = await openRun("hooli");
    const asked = await callTool(run, "issue_refund", refund("H0192", 2000));
    const id = asked.body.approval?.id ?? "";

    const unconfirmed = await hooliApprove(id, refund("H0191", 1500), false);
    expect(unconfirmed.status).toBe(409);
    expect(unconfirmed.body.error?.message).toContain("another run already acted on");
    expect(await refundsOf("H0191")).toHaveLength(1);

    const confirmed = await hooliApprove(id, refund("H0191", 1500), true);
    expect(confirmed.status, JSON.stringify(confirmed.body.error)).toBe(200);
    expect((confirmed.body.data as { approval: ApprovalRecord }).approval).toMatchObject({
      state: "executed",
      earlier_effects: [expect.objectContaining({ run_id: other.id, identity: { order_id: "H0191" } })],
    });
    expect(await refundsOf("H0191")).toHaveLength(2);
    expect(await refundsOf("H0192")).toHaveLength(0);
  });
});
