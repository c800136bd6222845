import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import type { ApprovalRecord } from "../../src/approvals/model";
import { MetricsReportSchema } from "../../src/wire/metrics";
import { signedInOperator } from "./console-client";
import {
  asOperator,
  callTool,
  decide,
  failWebhookDeliveries,
  ledgerStubOf,
  openRun,
  refund,
  refundsOfRun,
  type TestRun,
  webhookLog,
} from "./helpers";
import { connect, envelopeOf, textOf } from "./mcp-client";

/**
 * Approvals nobody decides in time: past its SLA a pending approval is overdue (the console says
 * so, the escalation role hears of it once on the signed webhook); at its expiry the agent is told
 * it expired undecided. And a rejection reaches the model with the operator's reason and what to
 * do next, in the text it reads. The sandbox's acme tenant sets approval_sla_s = 900 and
 * escalation_role = "support_lead"; issue_refund declares its own approval.sla_s = 600.
 */

/** A run long enough for the SLA to fall inside the approval's window (the default run lasts 120 s). */
const longRun = () => openRun("acme", { namespace: "support", limits: { deadline_s: 3600 } });

async function approvalOf(id: string): Promise<ApprovalRecord> {
  const detail = await asOperator(`/v1/approvals/${id}`);
  expect(detail.status).toBe(200);
  return (detail.body.data as { approval: ApprovalRecord }).approval;
}

/** Rewinds the approval's stored clocks by `ms`, as if that much time had passed since it was asked. */
async function rewind(run: TestRun, id: string, column: "sla_due_at" | "expires_at", to: number) {
  await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
    state.storage.sql.exec(`UPDATE approvals SET ${column} = ? WHERE id = ?`, to, id);
  });
}

const overdueId = (approvalId: string) => `evt_${approvalId}_overdue`;

async function overdueDeliveries(approvalId: string) {
  const log = await webhookLog();
  return {
    accepted: log.notifications.filter((entry) => entry.webhook_id === overdueId(approvalId)),
    refused: log.rejections.filter((entry) => entry.webhook_id === overdueId(approvalId)),
  };
}

/** The table row (or list item) of the console page that names this approval. */
function rowOf(html: string, approvalId: string): string {
  const row = html.split(/<tr\b/).find((part) => part.includes(approvalId));
  if (!row) throw new Error(`no row of ${approvalId} on the page`);
  return row;
}

describe("an approval's SLA", () => {
  it("is the tool's declared approval.sla_s, else the tenant's approval_sla_s, and none past the approval's window", async () => {
    const run = await longRun();
    const asked = await callTool(run, "issue_refund", refund("A1001", 310));
    const byTool = await approvalOf(asked.body.approval?.id ?? "");
    expect(Date.parse(byTool.sla_due_at ?? "") - Date.parse(byTool.created_at)).toBe(600_000);
    expect(byTool).toMatchObject({ overdue: false, escalated_at: null });

    const email = await callTool(run, "send_customer_email", {
      draft_id: "dr_4Fz0aQ9mW2xYc7Lp1Rt8Vb",
      draft_version: 1,
    });
    const byTenant = await approvalOf(email.body.approval?.id ?? "");
    expect(Date.parse(byTenant.sla_due_at ?? "") - Date.parse(byTenant.created_at)).toBe(900_000);

    // A run of two minutes: its approvals expire with it, before any SLA, so none is ever overdue.
    const short = await openRun("acme");
    const brief = await callTool(short, "issue_refund", refund("A1001", 311));
    expect(await approvalOf(brief.body.approval?.id ?? "")).toMatchObject({
      sla_due_at: null,
      overdue: false,
    });
  });
});

describe("an approval still undecided past its SLA", () => {
  it("is marked overdue in the API and the console, and the escalation role is notified once on the signed webhook", async () => {
    const run = await longRun();
    const asked = await callTool(run, "issue_refund", refund("A1002", 320));
    const id = asked.body.approval?.id ?? "";
    expect((await overdueDeliveries(id)).accepted).toEqual([]);

    // Ten minutes pass: the ledger's alarm, not a request, finds the approval overdue.
    await rewind(run, id, "sla_due_at", Date.now() - 1);
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);

    const approval = await approvalOf(id);
    expect(approval).toMatchObject({ state: "pending", overdue: true });
    expect(approval.escalated_at).not.toBeNull();
    const [sent] = (await overdueDeliveries(id)).accepted;
    expect(sent).toMatchObject({
      verified: true,
      body: {
        type: "approval.overdue",
        tenant: "acme",
        escalation_role: "support_lead",
        approval: { id, state: "pending", overdue: true, sla_due_at: approval.sla_due_at },
      },
    });

    const listed = await asOperator(`/v1/approvals?state=pending&run_id=${run.id}`);
    expect((listed.body.data as { approvals: unknown[] }).approvals).toEqual([
      expect.objectContaining({ id, overdue: true, escalated_at: approval.escalated_at }),
    ]);

    const operator = await signedInOperator("acme");
    const home = await operator.get("/console");
    expect(rowOf(home.html, run.id)).toContain('class="badge badge-overdue"');
    const list = await operator.get(`/console/approvals?state=pending&run_id=${run.id}`);
    expect(rowOf(list.html, id)).toContain('class="badge badge-overdue"');
    const page = await operator.get(`/console/approvals/${id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('class="badge badge-overdue"');
    expect(page.html).toContain("Overdue:");
    expect(page.html).toContain("The escalation role was notified");

    // The agents' health counts it once, as an approval past its SLA (a rate alerts can watch).
    const overdueCount = async () => {
      const { body } = await asOperator("/v1/metrics?namespace=support");
      return MetricsReportSchema.parse(body.data).series[0]?.totals.approvals_overdue ?? 0;
    };
    await vi.waitFor(async () => expect(await overdueCount()).toBe(1), { timeout: 15_000, interval: 200 });
    expect((await operator.get("/console/health")).html).toContain("1 approval went past its SLA undecided");

    // The alarm rings again (its next reason is the expiry): the announcement is not sent twice.
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    await callTool(run, "issue_refund", refund("A1002", 320));
    expect((await overdueDeliveries(id)).accepted).toHaveLength(1);
    expect((await approvalOf(id)).escalated_at).toBe(approval.escalated_at);

    // Overdue is not decided: it can still be rejected (or approved) until it expires.
    expect((await decide(id, "reject", "Refunds over a day old go to finance.")).status).toBe(200);
    const decided = await approvalOf(id);
    expect(decided).toMatchObject({ state: "rejected", overdue: false });
    expect(
      rowOf((await operator.get(`/console/approvals?state=all&run_id=${run.id}`)).html, id),
    ).not.toContain("badge-overdue");
  });

  it("keeps an announcement its receiver failed to take, and the alarm sends it again with the same webhook-id until it is acknowledged", async () => {
    const run = await longRun();
    const id = (await callTool(run, "issue_refund", refund("A1003", 330))).body.approval?.id ?? "";
    // The receiver is down for the next two deliveries of this event: 503, which the proxy must not drop.
    await failWebhookDeliveries(overdueId(id), 2);

    await rewind(run, id, "sla_due_at", Date.now() - 1);
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    expect((await overdueDeliveries(id)).refused.map((entry) => entry.code)).toEqual([
      "receiver_unavailable",
    ]);
    const owed = () =>
      runInDurableObject(ledgerStubOf(run), (_instance, state) =>
        state.storage.sql
          .exec<{ attempts: number }>("SELECT attempts FROM outbox WHERE topic = ?", `escalation:${id}`)
          .toArray(),
      );
    expect(await owed()).toEqual([{ attempts: 1 }]);

    // Its retry is due: the alarm sends it again, under the same id, and marks nothing twice.
    const escalatedAt = (await approvalOf(id)).escalated_at;
    const retryNow = () =>
      runInDurableObject(ledgerStubOf(run), (_instance, state) => {
        state.storage.sql.exec(
          "UPDATE outbox SET next_attempt_at = ? WHERE topic = ?",
          Date.now() - 1,
          `escalation:${id}`,
        );
      });
    await retryNow();
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    expect((await overdueDeliveries(id)).refused).toHaveLength(2);
    expect(await owed()).toEqual([{ attempts: 2 }]);
    expect((await approvalOf(id)).escalated_at).toBe(escalatedAt);

    // The receiver is back: the third attempt is recorded, once, and nothing more is owed.
    await retryNow();
    await runDurableObjectAlarm(ledgerStubOf(run));
    const { accepted } = await overdueDeliveries(id);
    expect(accepted).toMatchObject([{ verified: true, redeliveries: 0, body: { type: "approval.overdue" } }]);
    expect(await owed()).toEqual([]);
    expect((await approvalOf(id)).escalated_at).toBe(escalatedAt);
  });

  it("takes the acknowledgement of an id its receiver already held, after an answer that was lost, as delivered", async () => {
    const run = await longRun();
    const id = (await callTool(run, "issue_refund", refund("A1003", 331))).body.approval?.id ?? "";
    // The receiver already holds this webhook-id, as after a delivery whose answer never came back.
    const held = JSON.stringify({ type: "approval.overdue", approval: { id } });
    const at = new Date();
    const posted = await env.ORDERS_API.fetch(
      new Request("https://sandbox.test/_hooks/approvals", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": overdueId(id),
          "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
          "webhook-signature": new Webhook(env.APPROVAL_WEBHOOK_SECRET ?? "").sign(overdueId(id), at, held),
        },
        body: held,
      }),
    );
    expect(posted.status).toBe(202);

    await rewind(run, id, "sla_due_at", Date.now() - 1);
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    // Acknowledged (2xx) without being recorded again: the proxy owes nothing more.
    const { accepted, refused } = await overdueDeliveries(id);
    expect(accepted).toMatchObject([{ redeliveries: 1 }]);
    expect(refused).toEqual([]);
    const owed = await runInDurableObject(ledgerStubOf(run), (_instance, state) =>
      state.storage.sql.exec("SELECT 1 FROM outbox WHERE topic = ?", `escalation:${id}`).toArray(),
    );
    expect(owed).toEqual([]);
  });
});

describe("how a call waiting for a human ends without running", () => {
  it("at expiry tells the agent it expired undecided: terminal, its own reason, not a rejection, over REST and MCP", async () => {
    const run = await longRun();
    const args = refund("A1004", 340);
    const id = (await callTool(run, "issue_refund", args)).body.approval?.id ?? "";
    await rewind(run, id, "expires_at", Date.now() - 1);
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);

    const after = await callTool(run, "issue_refund", args);
    expect(after.body.outcome).toBe("terminal_failure");
    expect(after.body.error).toMatchObject({
      code: "approval_expired",
      side_effect_confirmed: false,
      details: { approval_id: id, ended: "expired_undecided" },
    });
    expect(after.body.error?.message).toMatch(/^This call's approval expired undecided \(nobody decided/);
    expect(after.body.error?.message).toContain("Do not retry; tell the user nobody approved this in time");

    const { client } = await connect(run.token);
    const result = await client.callTool({ name: "issue_refund", arguments: args });
    expect(result.isError).toBe(true);
    expect(envelopeOf(result).error?.code).toBe("approval_expired");
    const text = textOf(result);
    expect(text).toContain("expired undecided");
    expect(text).toContain("Do not retry; tell the user nobody approved this in time");
    expect(text).not.toContain("rejected");
    expect(await refundsOfRun("A1004", run)).toHaveLength(0);
    await client.close();
  });

  it("after a rejection gives the model the operator's reason and the next step in content, not only structuredContent", async () => {
    const run = await longRun();
    const args = refund("A1005", 350);
    const { client } = await connect(run.token);
    const asked = await client.callTool({ name: "issue_refund", arguments: args });
    const id = envelopeOf(asked).approval?.id ?? "";
    const reason = "The customer already got store credit for this order.";
    expect((await decide(id, "reject", reason)).status).toBe(200);

    const result = await client.callTool({ name: "issue_refund", arguments: args });
    expect(result.isError).toBe(true);
    const envelope = envelopeOf(result);
    expect(envelope.outcome).toBe("terminal_failure");
    expect(envelope.error?.details).toMatchObject({ approval_id: id, reason, ended: "rejected" });
    const text = textOf(result);
    expect(text).toContain("approval_rejected");
    expect(text).toContain(`Operator's reason: "${reason}"`);
    expect(text).toContain("Do not retry; tell the user an operator rejected this");
    expect(text).not.toContain("expired");
    expect(await refundsOfRun("A1005", run)).toHaveLength(0);
    await client.close();
  });
});
