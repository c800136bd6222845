import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import type { ApprovalSummary } from "../../src/approvals/model";
import { notifyApproval } from "../../src/approvals/notify";
import {
  armFault,
  asOperator,
  callTool,
  decide,
  deliveredWebhook,
  failWebhookDeliveries,
  ledgerStubOf,
  openRun,
  refund,
  refundsOfRun,
  request,
  SANDBOX_ADMIN,
  sandboxRequests,
  traceOf,
  webhookLog,
} from "./helpers";

describe("the human approval gate", () => {
  it("holds a destructive call until an operator approves, then gives the agent the executed result", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1001", 1000));
    expect(asked.status).toBe(409);
    expect(asked.body.outcome).toBe("retryable_failure");
    expect(asked.body.error).toMatchObject({
      code: "approval_required",
      recommended_next_action: "wait_for_approval",
      retry_after_ms: 30_000,
      side_effect_confirmed: false,
    });
    const approval = asked.body.approval;
    expect(approval?.state).toBe("pending");
    // An approval cannot outlive its run: it expires at the run's deadline when that comes first.
    expect(approval?.expires_at).toBe(run.data.deadline_at);
    expect(asked.body.budget?.destructive_left).toBe(1);
    expect(await sandboxRequests(run.id)).toEqual([]);

    // Asking again while pending returns the same approval, not a new one, and is not a repeat.
    for (let poll = 0; poll < 3; poll++) {
      const again = await callTool(run, "issue_refund", refund("A1001", 1000));
      expect(again.body.approval?.id, JSON.stringify(again.body.error)).toBe(approval?.id);
    }
    const listed = await asOperator("/v1/approvals?state=pending");
    const mine = (
      listed.body.data as { approvals: Array<{ id: string; run_id: string; args: unknown }> }
    ).approvals.filter((entry) => entry.run_id === run.id);
    expect(mine).toEqual([expect.objectContaining({ id: approval?.id, args: refund("A1001", 1000) })]);

    const detail = await asOperator(`/v1/approvals/${approval?.id}`);
    expect(detail.body.data).toMatchObject({
      approval: { tool: "issue_refund", args: refund("A1001", 1000), state: "pending" },
    });
    expect((detail.body.data as { trace: unknown[] }).trace).toHaveLength(4);

    const approved = await decide(approval?.id ?? "", "approve", "customer called, verified");
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({
      approval: {
        state: "executed",
        decided_by: expect.stringMatching(/^operator:/),
        result: { outcome: "success" },
      },
    });
    expect(await refundsOfRun("A1001", run)).toHaveLength(1);

    const after = await callTool(run, "issue_refund", refund("A1001", 1000));
    expect(after.body.outcome).toBe("success");
    expect(after.body.replayed).toBe(true);
    expect(after.body.approval).toMatchObject({ id: approval?.id, state: "executed" });
    expect((after.body.data as { amount_cents: number }).amount_cents).toBe(1000);
    expect(await refundsOfRun("A1001", run)).toHaveLength(1);
    const trace = await traceOf(run);
    expect(trace.filter((entry) => String(entry.actor).startsWith("operator:"))).toHaveLength(1);
  });

  it("keeps an approved call whose execution was unclear approved, until the agent's resend executes it", async () => {
    const run = await openRun("acme");
    await armFault(run.id, { mode: "bad_gateway", path_prefix: "/refunds", times: 1 });
    const asked = await callTool(run, "issue_refund", refund("A1002", 2));
    const id = asked.body.approval?.id ?? "";
    const approved = await decide(id, "approve");
    expect(approved.body.data).toMatchObject({ approval: { state: "approved", result: null } });
    const resent = await callTool(run, "issue_refund", refund("A1002", 2));
    expect(resent.body.outcome).toBe("success");
    const detail = await asOperator(`/v1/approvals/${id}`);
    const sent = (await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds");
    expect(sent.map((entry) => entry.status)).toEqual([502, 201]);
    expect(await refundsOfRun("A1002", run)).toHaveLength(1);
    expect(new Set(sent.map((entry) => entry.idempotency_key)).size).toBe(1);
    expect(detail.body.data).toMatchObject({ approval: { state: "executed" } });
  });

  it("binds an approval to the exact arguments: approving one call never executes another", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 2 } });
    const first = await callTool(run, "issue_refund", refund("A1002", 700));
    const other = await callTool(run, "issue_refund", refund("A1002", 701));
    expect(other.body.approval?.id).not.toBe(first.body.approval?.id);
    // Other tests of this file refund A1002 in other runs: the operator confirms that they saw them.
    await decide(first.body.approval?.id ?? "", "approve", undefined, "acme", { confirm_duplicate: true });
    const refunds = await refundsOfRun("A1002", run);
    expect(refunds.map((entry) => entry.amount_cents)).toEqual([700]);
    expect((await callTool(run, "issue_refund", refund("A1002", 701))).body.error?.code).toBe(
      "approval_required",
    );
  });

  it("executes once when two operators approve at the same moment", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1003", 900));
    const id = asked.body.approval?.id ?? "";
    const [a, b] = await Promise.all([decide(id, "approve"), decide(id, "approve")]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await refundsOfRun("A1003", run)).toHaveLength(1);
    expect((await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds")).toHaveLength(1);
  });

  it("tells the agent an operator rejected the call, with the reason, and never executes it", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "send_customer_email", {
      draft_id: "dr_4Fz0aQ9mW2xYc7Lp1Rt8Vb",
      draft_version: 1,
    });
    const id = asked.body.approval?.id ?? "";
    const rejected = await decide(id, "reject", "Wrong customer; the order belongs to C100.");
    expect(rejected.body.data).toMatchObject({ approval: { state: "rejected" } });
    const after = await callTool(run, "send_customer_email", {
      draft_id: "dr_4Fz0aQ9mW2xYc7Lp1Rt8Vb",
      draft_version: 1,
    });
    expect(after.body.outcome).toBe("terminal_failure");
    expect(after.body.error?.code).toBe("approval_rejected");
    expect(after.body.error?.message).toContain("Wrong customer; the order belongs to C100.");
    expect(await sandboxRequests(run.id)).toEqual([]);
    expect((await decide(id, "approve")).status).toBe(409);
  });

  it("requires a reason to reject", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1004", 100));
    const { status, body } = await decide(asked.body.approval?.id ?? "", "reject");
    expect(status).toBe(422);
    expect(body.error?.problems?.[0]).toMatchObject({ field: "reason", reason: "missing required field" });
  });

  it("expires an approval nobody decided: the agent gets approval_expired and it can no longer be granted", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1004", 200));
    const id = asked.body.approval?.id ?? "";
    await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      state.storage.sql.exec("UPDATE approvals SET expires_at = ? WHERE id = ?", Date.now() - 1, id);
    });
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    const expired = await asOperator("/v1/approvals?state=expired");
    expect(
      (expired.body.data as { approvals: Array<{ id: string }> }).approvals.map((entry) => entry.id),
    ).toContain(id);
    const after = await callTool(run, "issue_refund", refund("A1004", 200));
    expect(after.body.error?.code).toBe("approval_expired");
    expect(after.body.outcome).toBe("terminal_failure");
    expect((await decide(id, "approve")).status).toBe(409);
    expect(await refundsOfRun("A1004", run)).toHaveLength(0);
  });

  it("invalidates a pending approval when the policy it was asked under changed", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1005", 100));
    const id = asked.body.approval?.id ?? "";
    await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      state.storage.sql.exec("UPDATE approvals SET policy_version = 'pol_older_rules' WHERE id = ?", id);
    });
    const { status, body } = await decide(id, "approve");
    expect(status).toBe(409);
    expect(body.error?.message).toContain("policy changed");
    expect((await callTool(run, "issue_refund", refund("A1005", 100))).body.error?.code).toBe(
      "approval_expired",
    );
  });

  it("counts executions, not requests, against the destructive cap", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 1 } });
    const a = await callTool(run, "issue_refund", refund("A1001", 111));
    const b = await callTool(run, "issue_refund", refund("A1001", 112));
    expect(b.body.budget?.destructive_left).toBe(1);
    const confirmed = { confirm_duplicate: true };
    expect((await decide(a.body.approval?.id ?? "", "approve", undefined, "acme", confirmed)).status).toBe(
      200,
    );
    const refused = await decide(b.body.approval?.id ?? "", "approve", undefined, "acme", confirmed);
    expect(refused.status).toBe(409);
    expect(refused.body.error?.message).toContain("max_destructive");
    expect((await refundsOfRun("A1001", run)).map((entry) => entry.amount_cents)).toEqual([111]);
  });

  it("limits how many approvals a run may have open", async () => {
    const run = await openRun("acme");
    for (const amount of [301, 302, 303]) {
      expect((await callTool(run, "issue_refund", refund("A1002", amount))).body.error?.code).toBe(
        "approval_required",
      );
    }
    const fourth = await callTool(run, "issue_refund", refund("A1002", 304));
    expect(fourth.body.error).toMatchObject({
      code: "budget_exhausted",
      details: { limit: "max_open_approvals" },
    });
  });

  it("lets a policy demand approval for a write, and waive it for a small refund", async () => {
    const acme = await openRun("acme");
    const urgent = await callTool(acme, "create_internal_ticket", {
      customer_id: "C100",
      priority: "urgent",
      summary: "Customer reports fraud on their account right now.",
    });
    expect(urgent.body.error?.code).toBe("approval_required");
    const globex = await openRun("globex", { namespace: "support", limits: { max_destructive: 2 } });
    const small = await callTool(globex, "issue_refund", refund("B2002", 500));
    expect(small.body.outcome).toBe("success");
    const large = await callTool(globex, "issue_refund", refund("B2002", 5000));
    expect(large.body.error?.code).toBe("approval_required");
  });
});

describe("signed approval webhooks (Standard Webhooks)", () => {
  /** Posts to the sandbox's receiver directly, as an attacker (or a replaying proxy) could. */
  function postHook(body: string, headers: Record<string, string>) {
    return env.ORDERS_API.fetch(
      new Request("https://sandbox.test/_hooks/approvals", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      }),
    );
  }

  function signed(id: string, body: string, at = new Date(), secret = env.APPROVAL_WEBHOOK_SECRET ?? "") {
    return {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, at, body),
    };
  }

  const event = (id: string) =>
    JSON.stringify({
      type: "approval.created",
      timestamp: new Date().toISOString(),
      tenant: "acme",
      approval: { id, state: "pending" },
      console_path: `/console/approvals/${id}`,
    });

  it("signs each event of a real approval, and the sandbox records it verified, once per state", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 2 } });
    const asked = await callTool(run, "issue_refund", refund("A1003", 123));
    const id = asked.body.approval?.id ?? "";
    const created = await deliveredWebhook(`evt_${id}_pending`);
    expect(created).toMatchObject({
      verified: true,
      webhook_id: `evt_${id}_pending`,
      body: { type: "approval.created", tenant: "acme", approval: { id, state: "pending" } },
    });
    expect(
      Math.abs((created.webhook_timestamp ?? 0) * 1000 - Date.parse(created.body.timestamp)),
    ).toBeLessThan(1000);

    expect(
      (await decide(id, "approve", "verified by phone", "acme", { confirm_duplicate: true })).status,
    ).toBe(200);
    expect((await deliveredWebhook(`evt_${id}_approved`)).body).toMatchObject({
      type: "approval.decided",
      approval: { id, state: "approved" },
    });
    expect((await deliveredWebhook(`evt_${id}_executed`)).body).toMatchObject({
      type: "approval.executed",
      approval: { id, state: "executed" },
    });

    const other = (await callTool(run, "issue_refund", refund("A1003", 124))).body.approval?.id ?? "";
    await deliveredWebhook(`evt_${other}_pending`);
    await request(`/v1/runs/${run.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect((await deliveredWebhook(`evt_${other}_expired`)).body).toMatchObject({
      type: "approval.expired",
      approval: { id: other, state: "expired" },
    });

    const mine = (await webhookLog()).notifications.filter((entry) =>
      [id, other].includes(entry.body.approval?.id),
    );
    expect(mine.every((entry) => entry.verified)).toBe(true);
    // Asking again while pending announces nothing new: one delivery per state reached.
    expect(mine.map((entry) => entry.webhook_id).sort()).toEqual(
      [
        `evt_${id}_pending`,
        `evt_${id}_approved`,
        `evt_${id}_executed`,
        `evt_${other}_pending`,
        `evt_${other}_expired`,
      ].sort(),
    );
  });

  it("refuses a forged signature and records nothing", async () => {
    const id = "evt_apr_forged000000000000000000_pending";
    const body = event("apr_forged000000000000000000");
    const forged = await postHook(
      body,
      signed(id, body, new Date(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
    );
    expect(forged.status).toBe(401);
    expect(await forged.json()).toMatchObject({ error: { code: "invalid_signature" } });
    const tampered = await postHook(body.replace("acme", "globex"), signed(id, body));
    expect(tampered.status).toBe(401);
    const unsigned = await postHook(body, {});
    expect(unsigned.status).toBe(400);
    expect(await unsigned.json()).toMatchObject({ error: { code: "missing_signature" } });
    const { notifications, rejections } = await webhookLog();
    expect(notifications.some((entry) => entry.webhook_id === id)).toBe(false);
    expect(rejections.filter((entry) => entry.webhook_id === id).map((entry) => entry.code)).toEqual([
      "invalid_signature",
      "invalid_signature",
    ]);
  });

  it("acknowledges a repeated delivery without recording it twice: the same id and body posted again, or a real event's id re-signed", async () => {
    const id = "evt_apr_replayed0000000000000000_pending";
    const body = event("apr_replayed0000000000000000");
    const headers = signed(id, body);
    expect((await postHook(body, headers)).status).toBe(202);
    // As after an acknowledgement the sender never got: a 2xx, so that it stops retrying.
    const repeated = await postHook(body, headers);
    expect(repeated.status).toBe(200);
    expect(await repeated.json()).toEqual({ ok: true, duplicate: true });
    const resigned = await postHook(body, signed(id, body, new Date(Date.now() + 1000)));
    expect(resigned.status).toBe(200);

    const run = await openRun("acme");
    const approvalId = (await callTool(run, "issue_refund", refund("A1004", 125))).body.approval?.id ?? "";
    const real = await deliveredWebhook(`evt_${approvalId}_pending`);
    const again = JSON.stringify(real.body);
    expect((await postHook(again, signed(`evt_${approvalId}_pending`, again))).status).toBe(200);

    const { notifications, rejections } = await webhookLog();
    expect(notifications.filter((entry) => entry.webhook_id === id)).toMatchObject([{ redeliveries: 2 }]);
    expect(notifications.filter((entry) => entry.webhook_id === `evt_${approvalId}_pending`)).toMatchObject([
      { redeliveries: 1, body: real.body },
    ]);
    expect(
      rejections.filter((entry) => [id, `evt_${approvalId}_pending`].includes(entry.webhook_id ?? "")),
    ).toEqual([]);
  });

  it("answers 503 while a failure is armed, records nothing then, and records the next delivery", async () => {
    const id = "evt_apr_failing00000000000000000_pending";
    const other = "evt_apr_unaffected00000000000000_pending";
    const body = event("apr_failing00000000000000000");
    await failWebhookDeliveries(id, 2);
    // Unverifiable deliveries are refused as always and use up no armed failure.
    expect((await postHook(body, {})).status).toBe(400);
    for (let attempt = 0; attempt < 2; attempt++) {
      const failed = await postHook(body, signed(id, body));
      expect(failed.status).toBe(503);
      expect(await failed.json()).toMatchObject({ error: { code: "receiver_unavailable" } });
    }
    expect((await postHook(body, signed(other, body))).status).toBe(202);
    expect((await postHook(body, signed(id, body))).status).toBe(202);
    const { notifications, rejections } = await webhookLog();
    expect(notifications.filter((entry) => entry.webhook_id === id)).toMatchObject([{ redeliveries: 0 }]);
    expect(
      rejections.filter((entry) => entry.webhook_id === id).map((entry) => [entry.status, entry.code]),
    ).toEqual([
      [503, "receiver_unavailable"],
      [503, "receiver_unavailable"],
    ]);
  });

  it("refuses a failure switch it cannot read, saying which field is wrong", async () => {
    const arm = (body: string) =>
      env.ORDERS_API.fetch(
        new Request("https://sandbox.test/_admin/notifications/failures", {
          method: "POST",
          headers: { "x-sandbox-admin": SANDBOX_ADMIN, "content-type": "application/json" },
          body,
        }),
      );
    for (const [body, field] of [
      ["{}", "count"],
      ['{"count": 0}', "count"],
      ['{"count": 1.5}', "count"],
      ['{"count": 1, "webhook_id": ""}', "webhook_id"],
      ['{"count": 1, "times": 2}', "times"],
      ["not json", "JSON"],
    ]) {
      const refused = await arm(body ?? "");
      expect(refused.status, body).toBe(400);
      const answer = (await refused.json()) as { error: { code: string; message: string } };
      expect(answer.error.code).toBe("invalid_request");
      expect(answer.error.message, body).toContain(field);
    }
    const unauthorized = await env.ORDERS_API.fetch(
      new Request("https://sandbox.test/_admin/notifications/failures", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"count": 1}',
      }),
    );
    expect(unauthorized.status).toBe(401);
  });

  it("refuses a timestamp beyond the five-minute tolerance, old or in the future", async () => {
    const id = "evt_apr_stale000000000000000000_pending";
    const body = event("apr_stale000000000000000000");
    const old = await postHook(body, signed(id, body, new Date(Date.now() - 6 * 60_000)));
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({ error: { code: "stale_timestamp" } });
    const future = await postHook(body, signed(id, body, new Date(Date.now() + 6 * 60_000)));
    expect(future.status).toBe(401);
    expect((await webhookLog()).notifications.some((entry) => entry.webhook_id === id)).toBe(false);
    // Within the tolerance the same event is accepted: the refusals did not burn its id.
    expect((await postHook(body, signed(id, body, new Date(Date.now() - 60_000)))).status).toBe(202);
  });

  it("sends nothing, never unsigned, without a secret, and says so once", async () => {
    const sent: Request[] = [];
    const hook = {
      fetch: async (request: Request) => {
        sent.push(request);
        return new Response(null, { status: 202 });
      },
    };
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const bare = { ...env, APPROVAL_WEBHOOK: hook, APPROVAL_WEBHOOK_SECRET: undefined };
      const approval = {
        id: "apr_nosecret000000000000000",
        run_id: "run_x",
        tool: "issue_refund",
        side_effect: "destructive",
        state: "pending",
        args: {},
        reasons: [],
        created_at: 0,
        expires_at: 0,
        decided_by: null,
      } as unknown as ApprovalSummary;
      await notifyApproval(bare, "acme", approval);
      await notifyApproval(bare, "acme", approval);
      expect(sent).toEqual([]);
      expect(
        warn.mock.calls.filter(([message]) => String(message).includes("APPROVAL_WEBHOOK_SECRET")),
      ).toHaveLength(1);

      const withSecret = { ...env, APPROVAL_WEBHOOK: hook };
      await notifyApproval(withSecret, "acme", approval);
      expect(sent).toHaveLength(1);
      const request = sent[0] as Request;
      const verified = new Webhook(env.APPROVAL_WEBHOOK_SECRET ?? "").verify(await request.text(), {
        "webhook-id": request.headers.get("webhook-id") ?? "",
        "webhook-timestamp": request.headers.get("webhook-timestamp") ?? "",
        "webhook-signature": request.headers.get("webhook-signature") ?? "",
      });
      expect(verified).toMatchObject({ type: "approval.created", approval: { id: approval.id } });
      expect(request.headers.get("webhook-id")).toBe(`evt_${approval.id}_pending`);
    } finally {
      warn.mockRestore();
    }
  });
});

describe("no way around the gate", () => {
  it.each([
    ["approved: true", { approved: true }],
    ["an approval id", { approval_id: "apr_123" }],
    ["a skip flag", { skip_approval: true }],
  ])("refuses %s as an argument", async (_case, extra) => {
    const run = await openRun("acme");
    const { body } = await callTool(run, "issue_refund", { ...refund("A1001", 100), ...extra });
    expect(body.error?.code).toBe("validation_error");
    expect(body.error?.problems?.[0]?.reason).toBe("unknown field");
  });

  it("refuses a run token on operator routes (403)", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1001", 100));
    const { status, body } = await request(`/v1/approvals/${asked.body.approval?.id}/approve`, {
      method: "POST",
      headers: { authorization: `Bearer ${run.token}` },
      body: "{}",
    });
    expect(status).toBe(403);
    expect(body.error?.code).toBe("permission_error");
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("refuses a tenant key on operator routes (403) and no or a wrong key (401)", async () => {
    expect(
      (await request("/v1/approvals", { headers: { authorization: "Bearer acme-demo-key" } })).status,
    ).toBe(403);
    expect((await request("/v1/approvals")).status).toBe(401);
    expect(
      (await request("/v1/approvals", { headers: { authorization: "Bearer not-an-operator" } })).status,
    ).toBe(401);
  });

  it("keeps one tenant's operators away from another tenant's approvals", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1001", 100));
    const id = asked.body.approval?.id ?? "";
    expect((await asOperator(`/v1/approvals/${id}`, {}, "globex")).status).toBe(404);
    expect((await decide(id, "approve", undefined, "globex")).status).toBe(404);
    const listed = await asOperator("/v1/approvals", {}, "globex");
    expect(JSON.stringify(listed.body.data)).not.toContain(id);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("refuses an unknown state filter", async () => {
    const { status, body } = await asOperator("/v1/approvals?state=maybe");
    expect(status).toBe(422);
    // Query parameters are named `query.<name>` by the validation hook, as on GET /v1/tools.
    expect(body.error?.problems?.[0]).toMatchObject({
      field: "query.state",
      reason: '"maybe" is not an allowed value',
    });
  });
});
