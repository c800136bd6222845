import { env } from "cloudflare:workers";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import type { PresentedCredential } from "../../sandbox/src/model";
import { catalog } from "../../src/tools";
import { issueUpstreamCredential } from "../../src/upstream/credential";
import { passDeadline } from "./clock";
import { eventually, hasSettled } from "./eventually";
import {
  asOperator,
  callTool,
  decide,
  type OPERATOR_KEYS,
  openRun,
  postRaw,
  refund,
  refundsOfRun,
  request,
  sandbox,
  sandboxRequests,
  type TestRun,
} from "./helpers";
import { type CredentialClaims, configuredSigningKeys, credentialClaims } from "./upstream-credentials";

/**
 * Regressions for the exactly-once guarantees of the run ledger: every case checks
 * the proxy's answer and the sandbox's own records, because the sandbox is what really happened.
 */

/** What the operator API shows of one approval. */
interface ApprovalView {
  id: string;
  run_id: string;
  state: string;
  decision_reason: string | null;
}

async function approvalOf(id: string, tenant: keyof typeof OPERATOR_KEYS = "acme"): Promise<ApprovalView> {
  const { status, body } = await asOperator(`/v1/approvals/${id}`, {}, tenant);
  expect(status, JSON.stringify(body.error)).toBe(200);
  return (body.data as { approval: ApprovalView }).approval;
}

/** The ids of this run's approvals the operators see as pending. */
async function pendingApprovalsOf(run: TestRun, tenant: keyof typeof OPERATOR_KEYS = "acme") {
  const { body } = await asOperator("/v1/approvals?state=pending", {}, tenant);
  return (body.data as { approvals: Array<{ id: string; run_id: string }> }).approvals
    .filter((entry) => entry.run_id === run.id)
    .map((entry) => entry.id);
}

async function endRun(run: TestRun) {
  const ended = await request(`/v1/runs/${run.id}/end`, {
    method: "POST",
    headers: { authorization: `Bearer ${run.token}` },
  });
  expect(ended.status, JSON.stringify(ended.body.error)).toBe(200);
  return ended;
}

async function ticketsOfRun(run: TestRun) {
  const { tickets } = await sandbox<{ tickets: Array<Record<string, unknown>> }>(
    `/_admin/tickets?tenant=${run.tenant}`,
  );
  return tickets.filter((ticket) => ticket.run_id === run.id);
}

async function refundRequestsOf(run: TestRun) {
  return (await sandboxRequests(run.id)).filter((entry) => entry.path === "/refunds");
}

/** The claims of an upstream credential (a JWT), read without verifying it. */
function claimsOf(credential: string): CredentialClaims {
  const claims = credentialClaims(credential);
  expect(claims, "an upstream credential is a JWT").not.toBeNull();
  return claims as CredentialClaims;
}

/** When an upstream credential was signed, in epoch milliseconds. */
const issuedAtOf = (credential: string) => (decodeJwt(credential).iat ?? 0) * 1_000;

async function credentialsOf(run: TestRun): Promise<PresentedCredential[]> {
  const { credentials } = await sandbox<{ credentials: PresentedCredential[] }>(
    `/_admin/credentials?run_id=${encodeURIComponent(run.id)}`,
  );
  return credentials;
}

/** What an attacker holding a leaked credential sends straight to the upstream. */
function replayLookup(credential: string, orderId: string) {
  return env.ORDERS_API.fetch(
    new Request(`https://upstream.internal/orders/${orderId}`, {
      headers: { authorization: `Bearer ${credential}`, accept: "application/json" },
    }),
  );
}

describe("2. no dead ends: approval_required is only answered when the approval can still execute", () => {
  it("refuses a refund needing approval with budget_exhausted max_destructive once the destructive cap is spent, and opens no approval", async () => {
    // globex auto-approves refunds up to 1000 cents: the first spends the cap without an operator.
    const run = await openRun("globex", { namespace: "support", limits: { max_destructive: 1 } });
    const small = await callTool(run, "issue_refund", refund("B2003", 400));
    expect(small.body.outcome, JSON.stringify(small.body.error)).toBe("success");
    expect(small.body.budget?.destructive_left).toBe(0);

    const large = await callTool(run, "issue_refund", refund("B2003", 5_000));
    expect(large.body.outcome).toBe("terminal_failure");
    expect(large.body.error).toMatchObject({
      code: "budget_exhausted",
      details: { limit: "max_destructive" },
    });
    expect(large.body.approval).toBeNull();
    expect(await pendingApprovalsOf(run, "globex")).toEqual([]);
    expect((await refundsOfRun("B2003", run)).map((entry) => entry.amount_cents)).toEqual([400]);
  });

  it("refuses an urgent ticket (which needs approval) with budget_exhausted max_writes once the write cap is spent, and opens no approval", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_writes: 1 } });
    const normal = await callTool(run, "create_internal_ticket", {
      customer_id: "C100",
      priority: "normal",
      summary: "Customer asks for an invoice copy by email.",
    });
    expect(normal.body.outcome, JSON.stringify(normal.body.error)).toBe("success");
    expect(normal.body.budget?.writes_left).toBe(0);

    const urgent = await callTool(run, "create_internal_ticket", {
      customer_id: "C100",
      priority: "urgent",
      summary: "Customer reports fraud on their account right now.",
    });
    expect(urgent.body.outcome).toBe("terminal_failure");
    expect(urgent.body.error).toMatchObject({ code: "budget_exhausted", details: { limit: "max_writes" } });
    expect(urgent.body.approval).toBeNull();
    expect(await pendingApprovalsOf(run)).toEqual([]);
    expect(await ticketsOfRun(run)).toHaveLength(1);
  });

  it("expires a pending approval as soon as another call's request spends the budget it needed, before that request has answered", async () => {
    const run = await openRun("acme", {
      namespace: "support",
      limits: { max_writes: 1 },
      scenario: [{ mode: "slow_success", tool: "create_internal_ticket", hang_ms: 2_500 }],
    });
    const urgent = await callTool(run, "create_internal_ticket", {
      customer_id: "C100",
      priority: "urgent",
      summary: "Customer reports a charge they do not recognise.",
    });
    expect(urgent.body.error?.code).toBe("approval_required");
    const id = urgent.body.approval?.id ?? "";

    // The normal ticket spends the run's one write when its request leaves: from then on the urgent
    // ticket can never execute, even if this request's answer never comes back (a restart).
    const normal = callTool(run, "create_internal_ticket", {
      customer_id: "C100",
      priority: "normal",
      summary: "Customer asks for a copy of last month's invoice.",
    });
    await eventually("the normal ticket's request at the sandbox", async () =>
      (await sandboxRequests(run.id)).find((entry) => entry.tool === "create_internal_ticket"),
    );
    expect(await approvalOf(id)).toMatchObject({ state: "expired" });
    expect(await hasSettled(normal)).toBe(false);
    expect((await normal).body.outcome).toBe("success");
    expect(await pendingApprovalsOf(run)).toEqual([]);
  });

  it("expires the second of two pending approvals when the first spends max_destructive: it leaves the pending list, approving it is a 409 that executes nothing, and the agent's resend gets a terminal answer", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 1 } });
    const first = await callTool(run, "issue_refund", refund("A1001", 111));
    const second = await callTool(run, "issue_refund", refund("A1001", 112));
    expect([first.body.error?.code, second.body.error?.code]).toEqual([
      "approval_required",
      "approval_required",
    ]);
    const secondId = second.body.approval?.id ?? "";

    const approved = await decide(first.body.approval?.id ?? "", "approve");
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ approval: { state: "executed" } });

    const expired = await approvalOf(secondId);
    expect(expired.state).toBe("expired");
    expect(expired.decision_reason).toEqual(expect.any(String));
    expect(expired.decision_reason?.length).toBeGreaterThan(0);
    expect(await pendingApprovalsOf(run)).not.toContain(secondId);

    const refused = await decide(secondId, "approve");
    expect(refused.status).toBe(409);
    expect(refused.body.error?.code).toBe("conflict_error");
    expect((await refundsOfRun("A1001", run)).map((entry) => entry.amount_cents)).toEqual([111]);

    const resent = await callTool(run, "issue_refund", refund("A1001", 112));
    expect(resent.body.outcome, JSON.stringify(resent.body.error)).toBe("terminal_failure");
    expect(["approval_expired", "budget_exhausted", "run_closed"]).toContain(resent.body.error?.code);
    expect((await refundsOfRun("A1001", run)).map((entry) => entry.amount_cents)).toEqual([111]);
  });
});

describe("3. nothing executes after the run's deadline or end", () => {
  it("cannot approve a pending approval once its run passed the deadline: 409, no refund, and the approval is expired", async () => {
    // A minute, which passDeadline passes by rewinding the run's stored clock.
    const run = await openRun("acme", { namespace: "support", limits: { deadline_s: 60 } });
    const asked = await callTool(run, "issue_refund", refund("A1003", 300));
    expect(asked.body.error?.code).toBe("approval_required");
    const id = asked.body.approval?.id ?? "";

    // The deadline passes and no alarm has swept the approval yet: the decision itself must refuse.
    await passDeadline(run);
    const refused = await decide(id, "approve");
    expect(refused.status, JSON.stringify(refused.body.data)).toBe(409);
    expect(refused.body.error?.code).toBe("conflict_error");
    expect(await refundsOfRun("A1003", run)).toHaveLength(0);
    expect(await refundRequestsOf(run)).toEqual([]);
    const approval = await approvalOf(id);
    expect(approval.state).toBe("expired");
    expect(approval.decision_reason).toEqual(expect.any(String));
    expect(await pendingApprovalsOf(run)).not.toContain(id);
  });

  it("expires a run's pending approvals when the run ends: they leave the pending list and can no longer be approved", async () => {
    const run = await openRun("acme");
    const refundAsked = await callTool(run, "issue_refund", refund("A1004", 101));
    const emailAsked = await callTool(run, "send_customer_email", {
      draft_id: "dr_4Fz0aQ9mW2xYc7Lp1Rt8Vb",
      draft_version: 1,
    });
    const ids = [refundAsked.body.approval?.id ?? "", emailAsked.body.approval?.id ?? ""];
    expect(await pendingApprovalsOf(run)).toEqual(expect.arrayContaining(ids));

    await endRun(run);
    for (const id of ids) {
      const approval = await approvalOf(id);
      expect(approval.state, id).toBe("expired");
      expect(approval.decision_reason).toEqual(expect.any(String));
    }
    expect(await pendingApprovalsOf(run)).toEqual([]);
    const refused = await decide(ids[0] ?? "", "approve");
    expect(refused.status).toBe(409);
    expect(await refundsOfRun("A1004", run)).toHaveLength(0);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });
});

describe("4. the repeat breaker tells the truth about a write that completed", () => {
  it("answers the third identical auto-approved refund with repeat_detected, side_effect_confirmed true, the refund id and the stored outcome; the sandbox holds one refund", async () => {
    const run = await openRun("globex");
    const args = refund("B2002", 500);
    const first = await callTool(run, "issue_refund", args);
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    const refundId = (first.body.data as { refund_id: string }).refund_id;
    const second = await callTool(run, "issue_refund", args);
    expect(second.body.replayed).toBe(true);

    const third = await callTool(run, "issue_refund", args);
    expect(third.body.error).toMatchObject({
      code: "repeat_detected",
      side_effect_confirmed: true,
      external_id: refundId,
    });
    const observed = third.body.observed_state as { stored_outcome?: Record<string, unknown> } | null;
    expect(observed?.stored_outcome).toMatchObject({
      call_id: first.body.call_id,
      outcome: "success",
      error_code: null,
    });
    expect(observed?.stored_outcome?.data).toEqual(first.body.data);
    expect(await refundsOfRun("B2002", run)).toHaveLength(1);
    expect(await refundRequestsOf(run)).toHaveLength(1);
  });

  it("answers the third identical completed ticket with repeat_detected, side_effect_confirmed true, the ticket id and the stored outcome; the sandbox holds one ticket", async () => {
    const run = await openRun("acme");
    const args = {
      customer_id: "C101",
      priority: "high",
      summary: "Chair arrived with a broken armrest; customer wants a replacement.",
    };
    const first = await callTool(run, "create_internal_ticket", args);
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    const ticketId = (first.body.data as { ticket_id: string }).ticket_id;
    expect((await callTool(run, "create_internal_ticket", args)).body.replayed).toBe(true);

    const third = await callTool(run, "create_internal_ticket", args);
    expect(third.body.error).toMatchObject({
      code: "repeat_detected",
      side_effect_confirmed: true,
      external_id: ticketId,
    });
    const observed = third.body.observed_state as { stored_outcome?: Record<string, unknown> } | null;
    expect(observed?.stored_outcome).toMatchObject({
      call_id: first.body.call_id,
      outcome: "success",
      error_code: null,
    });
    expect(observed?.stored_outcome?.data).toEqual(first.body.data);
    expect(await ticketsOfRun(run)).toHaveLength(1);
  });
});

describe("5. prototype keys are refused and canonical arguments identify a call", () => {
  const isValidationProblemAt = (fields: string[], path: string) =>
    fields.some((field) => field === path || field === `args.${path}`);

  it("refuses args wrapped in __proto__ with 422 validation_error naming __proto__, and never issues the refund", async () => {
    const run = await openRun("globex");
    const { status, body } = await postRaw(
      run,
      '{"tool":"issue_refund","args":{"__proto__":{"order_id":"B2005","amount_cents":100,"reason":"user_cancel"}}}',
    );
    expect(status, JSON.stringify(body)).toBe(422);
    expect(body.error?.code).toBe("validation_error");
    const fields = (body.error?.problems ?? []).map((problem) => problem.field);
    expect(isValidationProblemAt(fields, "__proto__"), JSON.stringify(fields)).toBe(true);
    expect(await refundsOfRun("B2005", run)).toHaveLength(0);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it.each([
    ["__proto__ at the top", '{"__proto__":{"order_id":"A1001"}}', "__proto__"],
    ["constructor at the top", '{"order_id":"A1001","constructor":{"order_id":"A1002"}}', "constructor"],
    ["prototype at the top", '{"order_id":"A1001","prototype":{"order_id":"A1002"}}', "prototype"],
    ["__proto__ nested", '{"order_id":"A1001","meta":{"__proto__":{"order_id":"A1002"}}}', "meta.__proto__"],
    ["constructor nested", '{"order_id":{"constructor":"A1001"}}', "order_id.constructor"],
    ["prototype nested", '{"order_id":"A1001","meta":{"deeper":{"prototype":{}}}}', "meta.deeper.prototype"],
  ])("refuses %s with 422 validation_error whose problem names the key path", async (_case, args, path) => {
    const run = await openRun("acme");
    const { status, body } = await postRaw(run, `{"tool":"lookup_order","args":${args}}`);
    expect(status, JSON.stringify(body)).toBe(422);
    expect(body.error?.code).toBe("validation_error");
    const fields = (body.error?.problems ?? []).map((problem) => problem.field);
    expect(isValidationProblemAt(fields, path), `${path} not in ${JSON.stringify(fields)}`).toBe(true);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("refuses four identical __proto__-wrapped reads before the repeat breaker: every one is validation_error, none reaches the sandbox", async () => {
    const run = await openRun("acme");
    const codes: Array<string | undefined> = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const { body } = await postRaw(
        run,
        '{"tool":"lookup_order","args":{"__proto__":{"order_id":"A1003"}}}',
      );
      codes.push(body.error?.code);
    }
    expect(codes).toEqual(["validation_error", "validation_error", "validation_error", "validation_error"]);
    expect(await sandboxRequests(run.id)).toEqual([]);
  });

  it("cannot slip past the repeat breaker by alternating plain and __proto__-wrapped copies of one read: the upstream sees it at most twice", async () => {
    const run = await openRun("acme");
    const plain = () => callTool(run, "lookup_order", { order_id: "A1004" });
    const wrapped = () => postRaw(run, '{"tool":"lookup_order","args":{"__proto__":{"order_id":"A1004"}}}');
    expect((await plain()).body.outcome).toBe("success");
    expect((await plain()).body.outcome).toBe("success");
    expect((await wrapped()).body.error?.code).toBe("validation_error");
    expect((await wrapped()).body.error?.code).toBe("validation_error");
    expect((await plain()).body.error?.code).toBe("repeat_detected");
    const lookups = (await sandboxRequests(run.id)).filter((entry) => entry.path === "/orders/A1004");
    expect(lookups).toHaveLength(2);
  });

  it("gives a call with reordered keys and whitespace the same idempotency key and the same repeat digest as the plain call", async () => {
    const run = await openRun("acme");
    const args = {
      customer_id: "C102",
      priority: "low",
      summary: "Customer would like a call back about delivery times.",
    };
    const plain = await callTool(run, "create_internal_ticket", args);
    expect(plain.body.outcome, JSON.stringify(plain.body.error)).toBe("success");
    const spaced = await postRaw(
      run,
      `{
        "args" : {
          "summary" :   "${args.summary}",
          "priority": "low" ,
          "customer_id":"C102"
        },
        "tool": "create_internal_ticket"
      }`,
    );
    expect(spaced.body.outcome, JSON.stringify(spaced.body.error)).toBe("success");
    expect(spaced.body.idempotency_key).toBe(plain.body.idempotency_key);
    expect(spaced.body.replayed).toBe(true);
    const third = await callTool(run, "create_internal_ticket", args);
    expect(third.body.error?.code).toBe("repeat_detected");
    expect(await ticketsOfRun(run)).toHaveLength(1);
  });
});

describe("6. upstream credentials die with the dispatch", () => {
  it("issues a credential that expires within the tool's timeout + 2 s: replayed after the run ended and it expired, the sandbox refuses it with 401", async () => {
    const run = await openRun("acme");
    const looked = await callTool(run, "lookup_order", { order_id: "A1001" });
    const answeredAt = Date.now();
    expect(looked.body.outcome, JSON.stringify(looked.body.error)).toBe("success");

    const presented = (await credentialsOf(run)).find((entry) => entry.tool === "lookup_order");
    expect(presented).toBeDefined();
    const credential = presented?.credential ?? "";
    const claims = claimsOf(credential);
    expect(claims).toMatchObject({ tenant: "acme", run: run.id, tool: "lookup_order" });
    // Issued no later than the answer: one attempt's timeout plus 2 s is all it may live.
    const timeout = catalog.find("support", "lookup_order")?.timeout_ms ?? 0;
    expect(timeout).toBeGreaterThan(0);
    expect(claims.exp - answeredAt).toBeLessThanOrEqual(timeout + 2_000);

    // The leak endpoint is the sandbox's admin API: a business credential never opens it.
    const withoutAdmin = await env.ORDERS_API.fetch(
      new Request(`https://upstream.internal/_admin/credentials?run_id=${run.id}`, {
        headers: { authorization: `Bearer ${credential}` },
      }),
    );
    expect(withoutAdmin.status).toBe(401);

    // Control: while it lives, the leaked credential works, so the 401 below is its expiry.
    expect((await replayLookup(credential, "A1001")).status).toBe(200);

    await endRun(run);
    // The same credential as the proxy signed it, issued just long enough ago that its exp has
    // passed: the sandbox's clock is real, so the signer's moves back instead of the test waiting.
    const ago = Math.ceil((claims.exp - Date.now()) / 1_000) * 1_000 + 1_000;
    const expired = await issueUpstreamCredential(
      {
        tenant: claims.tenant,
        run: claims.run,
        tool: claims.tool,
        exp: claims.exp - ago,
        request: { method: "GET", target: "/orders/A1001", body: null, idempotency_key: null },
      },
      configuredSigningKeys(),
      issuedAtOf(credential) - ago,
    );
    expect(decodeProtectedHeader(expired)).toEqual(decodeProtectedHeader(credential));
    expect(claimsOf(expired)).toEqual({ ...claims, exp: claims.exp - ago });
    const replay = await replayLookup(expired, "A1001");
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({
      error: { code: "unauthorized", message: "The credential has expired." },
    });
  });

  it("never reaches the sandbox for a call after /end: its request log and presented credentials stay unchanged", async () => {
    const run = await openRun("acme");
    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    await endRun(run);
    const logBefore = await sandboxRequests(run.id);
    const credentialsBefore = await credentialsOf(run);

    const after = await callTool(run, "lookup_order", { order_id: "A1002" });
    expect(after.body.error?.code).toBe("run_closed");
    expect(await sandboxRequests(run.id)).toEqual(logBefore);
    expect(await credentialsOf(run)).toEqual(credentialsBefore);
  });
});
