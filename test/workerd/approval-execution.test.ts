import { afterEach, describe, expect, it, vi } from "vitest";
import { forgetRemoteDefinitions } from "../../src/upstream/mcp-definitions";
import { signedInOperator } from "./console-client";
import {
  armFault,
  askAcmeRefund,
  asOperator,
  callTool,
  decide,
  openRun,
  refund,
  refundsOfRun,
  sandbox,
} from "./helpers";

/**
 * What an approval's call did, as the operator who approved it is told: the approval's `execution`
 * (executed, refused by the upstream, not sent, in doubt) beside its state, the answer of `approve`,
 * and the badge of the console's approval page and history.
 */

interface DecidedApproval {
  id: string;
  state: string;
  execution: string | null;
  result: { outcome: string; error: { code: string } | null } | null;
}

const approvalOf = (body: { data: unknown }) => (body.data as { approval: DecidedApproval }).approval;

/** The directory's copy of an approval, once the ledger delivered it. */
async function listed(id: string): Promise<DecidedApproval> {
  return vi.waitFor(
    async () => {
      const { body } = await asOperator("/v1/approvals?state=all&limit=100");
      const found = (body.data as { approvals: DecidedApproval[] }).approvals.find(
        (entry) => entry.id === id,
      );
      expect(found?.execution ?? null).not.toBeNull();
      return found as DecidedApproval;
    },
    { timeout: 5_000, interval: 50 },
  );
}

/** The state badges of a console page, as their text. */
function badges(html: string): string[] {
  return [...html.matchAll(/<span class="badge badge-([a-z_]+)"[^>]*>([^<]*)<\/span>/g)].map(
    (match) => `${match[1]}:${match[2]}`,
  );
}

afterEach(async () => {
  await sandbox("/_admin/helpdesk/drift?tenant=acme", { method: "DELETE" });
  forgetRemoteDefinitions();
});

describe("what an approved call did", () => {
  it("answers success for a call that executed, and says executed", async () => {
    const { run, id } = await askAcmeRefund("A1004", 150);
    const approved = await decide(id, "approve", undefined, "acme", { confirm_duplicate: true });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.outcome).toBe("success");
    expect(approvalOf(approved.body)).toMatchObject({ state: "executed", execution: "executed" });
    expect(await refundsOfRun("A1004", run)).toHaveLength(1);
    expect((await listed(id)).execution).toBe("executed");
    const operator = await signedInOperator();
    expect(badges((await operator.get(`/console/approvals/${id}`)).html)).toContain("executed:executed");
  });

  it("answers the upstream's refusal, not success, and never shows it as executed", async () => {
    // A1005 is cancelled: the payments API refuses any refund of it, having done nothing.
    const { run, id } = await askAcmeRefund("A1005", 100);
    const approved = await decide(id, "approve", undefined, "acme", { confirm_duplicate: true });
    expect(approved.status).toBe(502);
    expect(approved.body.outcome).toBe("terminal_failure");
    expect(approved.body.error).toMatchObject({
      side_effect_confirmed: false,
      details: { execution: "refused", approval_id: id },
    });
    expect(approved.body.error?.message).toMatch(/^Approved, but the upstream refused the call/);
    // The approval as before, for a client that reads it: its state says the call settled.
    expect(approvalOf(approved.body)).toMatchObject({
      state: "executed",
      execution: "refused",
      result: { outcome: "terminal_failure" },
    });
    expect(await refundsOfRun("A1005", run)).toHaveLength(0);

    const detail = await asOperator(`/v1/approvals/${id}`);
    expect(approvalOf(detail.body).execution).toBe("refused");
    expect((await listed(id)).execution).toBe("refused");

    const operator = await signedInOperator();
    const page = (await operator.get(`/console/approvals/${id}`)).html;
    expect(badges(page)).toContain("refused:refused by upstream");
    expect(badges(page)).not.toContain("executed:executed");
    const history = (await operator.get(`/console/approvals?run_id=${run.id}`)).html;
    expect(badges(history)).toContain("refused:refused by upstream");
    expect(badges(history)).not.toContain("executed:executed");
  });

  it("answers an approved remote call the proxy refused as drifted as not sent", async () => {
    const run = await openRun("acme", { namespace: "helpdesk" });
    const args = { conversation_id: "CV-1003", reason: `deletion request (${run.id})` };
    const held = await callTool(run, "purge_conversation", args);
    expect(held.body.error?.code).toBe("approval_required");
    const id = held.body.approval?.id ?? "";
    await sandbox("/_admin/helpdesk/drift", {
      method: "POST",
      body: JSON.stringify({ tenant: "acme", tool: "purge_conversation", change: "annotations" }),
    });
    forgetRemoteDefinitions();
    const approved = await decide(id, "approve");
    expect(approved.status).toBe(502);
    expect(approved.body.outcome).toBe("terminal_failure");
    expect(approved.body.error).toMatchObject({
      code: "upstream_changed",
      side_effect_confirmed: false,
      details: { execution: "not_sent" },
    });
    expect(approved.body.error?.message).toMatch(/^Approved, but the call was not sent/);
    expect(approvalOf(approved.body)).toMatchObject({ state: "executed", execution: "not_sent" });
    expect((await listed(id)).execution).toBe("not_sent");
    const operator = await signedInOperator();
    const page = (await operator.get(`/console/approvals/${id}`)).html;
    expect(badges(page)).toContain("not_sent:not sent");
    expect(badges(page)).not.toContain("executed:executed");
  });

  it("answers a call whose outcome is unknown as in doubt, and keeps the approval approved", async () => {
    const run = await openRun("acme");
    await armFault(run.id, { mode: "bad_gateway", path_prefix: "/refunds", times: 1 });
    const asked = await callTool(run, "issue_refund", refund("A1002", 3));
    const id = asked.body.approval?.id ?? "";
    const approved = await decide(id, "approve", undefined, "acme", { confirm_duplicate: true });
    expect(approved.status).toBe(502);
    expect(approved.body.outcome).not.toBe("success");
    expect(approved.body.error).toMatchObject({
      side_effect_confirmed: null,
      recommended_next_action: "reconcile",
      details: { execution: "in_doubt" },
    });
    expect(approvalOf(approved.body)).toMatchObject({
      state: "approved",
      execution: "in_doubt",
      result: null,
    });
    expect((await listed(id)).execution).toBe("in_doubt");
    const operator = await signedInOperator();
    expect(badges((await operator.get(`/console/approvals/${id}`)).html)).toContain("in_doubt:in doubt");

    // The agent's resend settles it: executed once.
    const resent = await callTool(run, "issue_refund", refund("A1002", 3));
    expect(resent.body.outcome, JSON.stringify(resent.body.error)).toBe("success");
    const detail = await asOperator(`/v1/approvals/${id}`);
    expect(approvalOf(detail.body)).toMatchObject({ state: "executed", execution: "executed" });
    await vi.waitFor(
      async () => {
        const { body } = await asOperator("/v1/approvals?state=all&limit=100");
        const found = (body.data as { approvals: DecidedApproval[] }).approvals.find(
          (entry) => entry.id === id,
        );
        expect(found?.execution).toBe("executed");
      },
      { timeout: 5_000, interval: 50 },
    );
  });

  it("says a rejected call was not sent, and pending ones nothing yet", async () => {
    const { id } = await askAcmeRefund("A1003", 120);
    const pending = await asOperator(`/v1/approvals/${id}`);
    expect(approvalOf(pending.body).execution).toBeNull();
    const rejected = await decide(id, "reject", "not this one");
    expect(rejected.status).toBe(200);
    expect(rejected.body.outcome).toBe("success");
    expect(approvalOf(rejected.body)).toMatchObject({ state: "rejected", execution: "not_sent" });
  });
});
