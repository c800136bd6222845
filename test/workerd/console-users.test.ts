import { describe, expect, it } from "vitest";
import { signedInOperator } from "./console-client";
import { asOperator, callTool, KEYS, refund, request, type TestRun } from "./helpers";
import { userAssertion, WAYNE_ISSUER } from "./user-assertions";

/** Whom an approval's call acts for, as operators see it: the approval, the pending list, the trace. */

async function runFor(sub: string, claims: Record<string, unknown>): Promise<TestRun> {
  const opened = await request("/v1/runs", {
    method: "POST",
    headers: {
      authorization: `Bearer ${KEYS.wayne}`,
      "content-type": "application/json",
      "x-user-assertion": await userAssertion(sub, claims),
    },
    body: JSON.stringify({ namespace: "support" }),
  });
  expect(opened.status, JSON.stringify(opened.body.error)).toBe(201);
  const data = opened.body.data as { run_id: string; run_token: string };
  return { id: data.run_id, token: data.run_token, tenant: "wayne", data };
}

describe("the user on an approval", () => {
  it("is stored with the approval and shown on its console page, in the pending list and in the trace", async () => {
    const run = await runFor("grace", { name: "Grace Hopper", refund_limit_cents: 1_000 });
    const held = await callTool(run, "issue_refund", refund("W0028", 5_000));
    expect(held.body.error?.code).toBe("approval_required");
    const id = held.body.approval?.id ?? "";
    const record = await asOperator(`/v1/approvals/${id}`, {}, "wayne");
    expect((record.body.data as { approval: { user: unknown } }).approval.user).toEqual({
      sub: "grace",
      iss: WAYNE_ISSUER,
      name: "Grace Hopper",
    });
    const list = await asOperator("/v1/approvals?state=pending", {}, "wayne");
    const listed = (list.body.data as { approvals: { id: string; user: unknown }[] }).approvals;
    expect(listed.find((entry) => entry.id === id)?.user).toMatchObject({ sub: "grace" });

    const console = await signedInOperator("wayne");
    const page = await console.get(`/console/approvals/${id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain("On behalf of");
    expect(page.html).toMatch(/Grace Hopper \(<code>grace<\/code>\)/);
    // The claims a policy read stay with the run: operators are shown who, not the user's limits.
    expect(page.html).not.toContain("refund_limit_cents");
    const pending = await console.get("/console");
    expect(pending.html).toMatch(/for <span class="acting-user">Grace Hopper \(<code>grace<\/code>\)/);

    const trace = await request(`/v1/runs/${run.id}/trace`, {
      headers: { authorization: `Bearer ${run.token}` },
    });
    expect((trace.body.data as { run: { user?: { sub: string } } }).run.user?.sub).toBe("grace");
  });
});
