import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import type { PresentedCredential } from "../../sandbox/src/model";
import type { Receipt } from "../../src/wire/audit";
import { asOperator, callTool, KEYS, refund, refundsOf, request, sandbox, type TestRun } from "./helpers";
import { forgerKey, userAssertion, WAYNE_ISSUER } from "./user-assertions";

/** Opens a wayne run, presenting `assertion` as the orchestrator would. */
function open(assertion: string | null, body: Record<string, unknown> = { namespace: "support" }) {
  return request("/v1/runs", {
    method: "POST",
    headers: {
      authorization: `Bearer ${KEYS.wayne}`,
      "content-type": "application/json",
      ...(assertion === null ? {} : { "x-user-assertion": assertion }),
    },
    body: JSON.stringify(body),
  });
}

async function runFor(sub: string, claims: Record<string, unknown>): Promise<TestRun> {
  const opened = await open(await userAssertion(sub, claims), {
    namespace: "support",
    limits: { max_writes: 10, max_destructive: 10 },
  });
  expect(opened.status, JSON.stringify(opened.body.error)).toBe(201);
  const data = opened.body.data as { run_id: string; run_token: string };
  return { id: data.run_id, token: data.run_token, tenant: "wayne", data };
}

const ALICE = { name: "Alice Ng", refund_limit_cents: 10_000 };
const BOB = { name: "Bob Ortiz", refund_limit_cents: 30_000 };

describe("a run acts for a verified user", () => {
  it("records the user its opener's assertion names: subject, issuer, name and claims", async () => {
    const run = await runFor("alice", ALICE);
    expect(run.data.user).toEqual({
      sub: "alice",
      iss: WAYNE_ISSUER,
      name: "Alice Ng",
      claims: { refund_limit_cents: 10_000 },
    });
    const status = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
    expect((status.body.data as { user?: { sub: string } }).user?.sub).toBe("alice");
  });

  it("refuses, with a 401 envelope and no run, a missing, forged, expired or foreign assertion", async () => {
    const refusals = [
      ["missing", null],
      ["forged", await userAssertion("alice", ALICE, { key: await forgerKey() })],
      ["expired", await userAssertion("alice", ALICE, { expiresIn: -120 })],
      ["foreign issuer", await userAssertion("alice", ALICE, { issuer: "https://idp.evil.example" })],
      ["foreign audience", await userAssertion("alice", ALICE, { audience: "another-service" })],
      ["not a JWT", "not-a-jwt"],
    ] as const;
    for (const [what, assertion] of refusals) {
      const answer = await open(assertion);
      expect(answer.status, what).toBe(401);
      expect(answer.body.error?.code, what).toBe("permission_error");
      expect(answer.body.data, what).toBeNull();
    }
    const expired = await open(await userAssertion("alice", ALICE, { expiresIn: -120 }));
    expect(expired.body.error?.message).toContain("expired");
  });

  it("tolerates a little clock skew on an assertion's expiry", async () => {
    const answer = await open(await userAssertion("alice", ALICE, { expiresIn: -5 }));
    expect(answer.status).toBe(201);
  });

  it("holds each user's refund above their own limit for a human, and lets the other's within it through", async () => {
    const [alice, bob] = await Promise.all([runFor("alice", ALICE), runFor("bob", BOB)]);
    const aliceAbove = await callTool(alice, "issue_refund", refund("W0001", 20_000));
    const bobWithin = await callTool(bob, "issue_refund", refund("W0002", 20_000));
    expect(aliceAbove.body.error?.code).toBe("approval_required");
    expect(JSON.stringify(aliceAbove.body)).toContain("20000 is above this user's refund limit of 10000");
    expect(bobWithin.body.outcome, JSON.stringify(bobWithin.body.error)).toBe("success");
    const bobAbove = await callTool(bob, "issue_refund", refund("W0003", 40_000));
    const aliceWithin = await callTool(alice, "issue_refund", refund("W0004", 5_000));
    expect(bobAbove.body.error?.code).toBe("approval_required");
    expect(aliceWithin.body.outcome, JSON.stringify(aliceWithin.body.error)).toBe("success");
  });

  it("lets nothing a model or a body sends name or change the user", async () => {
    const alice = await runFor("alice", ALICE);
    const asBob = await callTool(alice, "issue_refund", {
      ...refund("W0005", 20_000),
      user: { sub: "bob", refund_limit_cents: 1_000_000 },
    });
    expect(asBob.body.outcome).not.toBe("success");
    const held = await callTool(alice, "issue_refund", refund("W0005", 20_000), {
      "x-user-assertion": await userAssertion("bob", BOB),
    });
    expect(held.body.error?.code).toBe("approval_required");
    const withBody = await open(await userAssertion("alice", ALICE), {
      namespace: "support",
      user: { sub: "bob", iss: WAYNE_ISSUER, name: null, claims: { refund_limit_cents: 1_000_000 } },
    });
    expect(withBody.status).toBe(422);
  });

  it("names the user in the credential the upstream receives (act), which it verifies", async () => {
    const bob = await runFor("bob", BOB);
    const done = await callTool(bob, "issue_refund", refund("W0006", 1_000));
    expect(done.body.outcome, JSON.stringify(done.body.error)).toBe("success");
    const { credentials } = await sandbox<{ credentials: PresentedCredential[] }>(
      `/_admin/credentials?run_id=${encodeURIComponent(bob.id)}`,
    );
    const presented = credentials.find((entry) => entry.tool === "issue_refund");
    if (!presented) throw new Error("the sandbox was shown no issue_refund credential");
    // The sandbox verified it before it refunded (sandbox/src/auth.ts); its claims name the user.
    const payload = decodeJwt(presented.credential);
    expect(payload.act).toEqual({ sub: "bob", iss: WAYNE_ISSUER });
    expect(payload.sub).toBe("wayne");
  });
});

describe("an upstream that authorizes per user", () => {
  it("refuses a refund of another user's order, as the user its credential names is not the owner", async () => {
    const [alice, bob] = await Promise.all([runFor("alice", ALICE), runFor("bob", BOB)]);
    const before = await refundsOf("W0036");
    const refused = await callTool(alice, "issue_refund", refund("W0036", 1_000));
    expect(refused.body.error?.code, JSON.stringify(refused.body)).toBe("permission_error");
    expect(refused.body.error?.message).toContain("not_the_users_order");
    expect(refused.body.error?.details).toMatchObject({
      upstream_status: 403,
      upstream_code: "not_the_users_order",
    });
    expect(await refundsOf("W0036")).toHaveLength(before.length);
    const own = await callTool(bob, "issue_refund", refund("W0036", 1_000));
    expect(own.body.outcome, JSON.stringify(own.body.error)).toBe("success");
    const hers = await callTool(alice, "issue_refund", refund("W0031", 1_000));
    expect(hers.body.outcome, JSON.stringify(hers.body.error)).toBe("success");
    expect(await refundsOf("W0036")).toHaveLength(before.length + 1);
  });
});

describe("a refund's effect, per user", () => {
  it("tells two users' refunds of one order apart, and holds one user's repeat from another run", async () => {
    const [alice, bob, aliceAgain] = await Promise.all([
      runFor("alice", ALICE),
      runFor("bob", BOB),
      runFor("alice", ALICE),
    ]);
    const hers = await callTool(alice, "issue_refund", refund("W0007", 1_000));
    expect(hers.body.outcome, JSON.stringify(hers.body.error)).toBe("success");
    const his = await callTool(bob, "issue_refund", refund("W0007", 1_000));
    expect(his.body.outcome, JSON.stringify(his.body.error)).toBe("success");
    const repeat = await callTool(aliceAgain, "issue_refund", refund("W0007", 1_000));
    expect(repeat.body.error?.code).toBe("approval_required");
    const details = repeat.body.error?.details as
      | { earlier_effects: { run_id: string; identity: unknown }[] }
      | undefined;
    const earlier = details?.earlier_effects ?? [];
    expect(earlier.map((effect) => effect.run_id)).toEqual([alice.id]);
    expect(earlier[0]?.identity).toEqual({ order_id: "W0007", "@user": `${WAYNE_ISSUER} alice` });
    expect(await refundsOf("W0007")).toHaveLength(2);
  });
});

describe("the audit log, per user", () => {
  it("names the user a write acted for in its receipt: subject, issuer and name, never their claims", async () => {
    // A user of her own: this file's other tests spend alice's and bob's daily caps.
    const carol = await runFor("carol", { name: "Carol Diaz", refund_limit_cents: 10_000 });
    const made = await callTool(carol, "issue_refund", refund("W0008", 1_000));
    expect(made.body.outcome, JSON.stringify(made.body.error)).toBe("success");
    const { status, body } = await asOperator(`/v1/audit?run_id=${carol.id}`, {}, "wayne");
    expect(status, JSON.stringify(body.error)).toBe(200);
    const receipts = (body.data as { receipts: Receipt[] }).receipts;
    expect(receipts.length).toBeGreaterThan(0);
    for (const receipt of receipts)
      expect(receipt.end_user).toEqual({ sub: "carol", iss: WAYNE_ISSUER, name: "Carol Diaz" });
  });
});
