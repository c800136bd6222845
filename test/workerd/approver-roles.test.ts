import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../src/app";
import type { ApprovalRecord } from "../../src/wire/approval";
import { envelopeSchema } from "../../src/wire/envelope";
import { signedInOperator } from "./console-client";
import {
  ACME_OPERATORS,
  askAcmeRefund,
  callTool,
  ledgerStubOf,
  refund,
  refundsOfRun,
  request,
  restartDurableObject,
  sandbox,
} from "./helpers";

/**
 * Who approves (acme in wrangler.toml and .dev.vars.example): `issue_refund` names support_lead,
 * acme raises it to finance_lead above 20000 cents and asks two different operators above 30000.
 * Dana Reyes and Lee Park hold both roles, Riley Chen only support_lead, and Dana has a second key.
 */

type Operator = keyof typeof ACME_OPERATORS;

function decideAs(who: Operator, id: string, decision: "approve" | "reject", reason = "checked the order") {
  const body = decision === "approve" ? { reason, confirm_duplicate: true } : { reason };
  return request(`/v1/approvals/${id}/${decision}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACME_OPERATORS[who]}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function approvalOf(id: string): Promise<ApprovalRecord> {
  const { body } = await request(`/v1/approvals/${id}`, {
    headers: { authorization: `Bearer ${ACME_OPERATORS.riley}` },
  });
  return (body.data as { approval: ApprovalRecord }).approval;
}

interface Hooks {
  notifications: Array<{ webhook_id: string | null; body: { approval?: { id: string } } }>;
  rejections: Array<{ webhook_id: string | null }>;
}

/** The approval webhook's deliveries of one approval, once `last` arrived (they leave after the answer). */
async function webhooksOf(id: string, last: string): Promise<{ delivered: string[]; refused: string[] }> {
  for (let wait = 0; wait < 40; wait++) {
    const hooks = await sandbox<Hooks>("/_admin/notifications");
    if (hooks.notifications.some((entry) => entry.webhook_id === last)) {
      return {
        delivered: hooks.notifications
          .filter((entry) => entry.body.approval?.id === id)
          .map((entry) => entry.webhook_id ?? ""),
        refused: hooks.rejections
          .filter((entry) => entry.webhook_id?.includes(id))
          .map((entry) => entry.webhook_id ?? ""),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`webhook ${last} never arrived`);
}

const operatorId = (name: string) =>
  expect.objectContaining({ name, operator: expect.stringMatching(/^operator:/) });

describe("who approves: roles", () => {
  it("binds the tool's role to a small refund, and any operator holding it decides", async () => {
    const { run, id } = await askAcmeRefund("A1001", 400);
    expect(await approvalOf(id)).toMatchObject({
      approver_roles: ["support_lead"],
      approvals_required: 1,
      approvers: [],
    });
    const approved = await decideAs("riley", id, "approve");
    expect(approved.status, JSON.stringify(approved.body.error)).toBe(200);
    expect(approved.body.data).toMatchObject({
      approval: { state: "executed", decided_by_name: "Riley Chen" },
    });
    expect(await refundsOfRun("A1001", run)).toHaveLength(1);
  });

  it("refuses a decision from an operator without the raised role with 403 naming it, and executes nothing", async () => {
    const { run, id } = await askAcmeRefund("A1002", 20_100);
    expect(await approvalOf(id)).toMatchObject({ approver_roles: ["finance_lead"], approvals_required: 1 });

    for (const decision of ["approve", "reject"] as const) {
      const refused = await decideAs("riley", id, decision);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({
        code: "permission_error",
        details: { reason: "role_required", roles: ["finance_lead"] },
      });
      expect(refused.body.error?.message).toContain('"finance_lead"');
      expect(refused.body.error?.message).toContain('your key holds "support_lead"');
    }
    expect(await approvalOf(id)).toMatchObject({ state: "pending", decided_by: null });
    expect(await refundsOfRun("A1002", run)).toHaveLength(0);

    const approved = await decideAs("dana", id, "approve");
    expect(approved.body.data).toMatchObject({
      approval: { state: "executed", decided_by_name: "Dana Reyes" },
    });
    expect(await refundsOfRun("A1002", run)).toHaveLength(1);
  });
});

describe("who approves: the two-person rule", () => {
  it("records the first approval as 1 of 2, executes only on a second operator's, and never counts one person twice", async () => {
    const { run, id } = await askAcmeRefund("A1004", 35_000);
    expect(await approvalOf(id)).toMatchObject({
      approver_roles: ["finance_lead"],
      approvals_required: 2,
      approvers: [],
    });

    const first = await decideAs("dana", id, "approve");
    expect(first.status, JSON.stringify(first.body.error)).toBe(200);
    expect(first.body.data).toMatchObject({
      approval: { state: "pending", decided_by: null, approvers: [operatorId("Dana Reyes")] },
    });
    expect(await refundsOfRun("A1004", run)).toHaveLength(0);
    // The agent still waits.
    expect((await callTool(run, "issue_refund", refund("A1004", 35_000))).body.error?.code).toBe(
      "approval_required",
    );

    // The same key again, and Dana's second key (the same name): one person, still 1 of 2.
    for (const again of ["dana", "dana_second_key"] as const) {
      const refused = await decideAs(again, id, "approve");
      expect(refused.status).toBe(409);
      expect(refused.body.error?.code).toBe("conflict_error");
      expect(refused.body.error?.message).toContain("(1 of 2)");
    }
    expect((await decideAs("dana_second_key", id, "approve")).body.error?.message).toContain(
      "Dana Reyes already approved this with another key",
    );
    // Riley is another person but lacks the role: refused as such, not counted.
    expect((await decideAs("riley", id, "approve")).status).toBe(403);
    expect((await approvalOf(id)).approvers).toHaveLength(1);
    expect(await refundsOfRun("A1004", run)).toHaveLength(0);

    const second = await decideAs("lee", id, "approve");
    expect(second.status, JSON.stringify(second.body.error)).toBe(200);
    expect(second.body.data).toMatchObject({
      approval: {
        state: "executed",
        decided_by_name: "Lee Park",
        approvers: [operatorId("Dana Reyes"), operatorId("Lee Park")],
      },
    });
    expect(await refundsOfRun("A1004", run)).toHaveLength(1);
    // Deciding the same way again changes nothing and executes nothing more.
    expect((await decideAs("lee", id, "approve")).status).toBe(200);
    expect(await refundsOfRun("A1004", run)).toHaveLength(1);

    // The first approval changed no state: the webhook announced each state once, nothing more.
    const hooks = await webhooksOf(id, `evt_${id}_executed`);
    expect(hooks.delivered.sort()).toEqual([`evt_${id}_approved`, `evt_${id}_executed`, `evt_${id}_pending`]);
    expect(hooks.refused).toEqual([]);
  });

  it("ends it on a single rejection after the first approval", async () => {
    const { run, id } = await askAcmeRefund("A1001", 31_000);
    expect((await decideAs("dana", id, "approve")).status).toBe(200);
    const rejected = await decideAs("lee", id, "reject", "too large without a manager's note");
    expect(rejected.body.data).toMatchObject({
      approval: { state: "rejected", decided_by_name: "Lee Park" },
    });
    expect((await decideAs("lee", id, "approve")).status).toBe(409);
    const agent = await callTool(run, "issue_refund", refund("A1001", 31_000));
    expect(agent.body.error?.code).toBe("approval_rejected");
    expect(await refundsOfRun("A1001", run)).toHaveLength(0);
  });

  it("lets no approval of an expired one complete it, even after a first approval", async () => {
    const { run, id } = await askAcmeRefund("A1005", 31_000);
    expect((await decideAs("dana", id, "approve")).status).toBe(200);
    await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      state.storage.sql.exec("UPDATE approvals SET expires_at = ? WHERE id = ?", Date.now() - 1, id);
    });
    expect(await runDurableObjectAlarm(ledgerStubOf(run))).toBe(true);
    const late = await decideAs("lee", id, "approve");
    expect(late.status).toBe(409);
    expect(await approvalOf(id)).toMatchObject({ state: "expired", approvers: [operatorId("Dana Reyes")] });
    expect(await refundsOfRun("A1005", run)).toHaveLength(0);
  });
});

describe("who approves: the console", () => {
  it("shows an operator without the role the approval read-only, and refuses their decision with 403 naming the role", async () => {
    const { run, id } = await askAcmeRefund("A1002", 20_500);
    const riley = await signedInOperator("acme", ACME_OPERATORS.riley);
    const page = await riley.get(`/console/approvals/${id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain("Only an operator holding the role “finance_lead” may decide this approval");
    expect(page.html).not.toContain(`action="/console/approvals/${id}/approve"`);
    const posted = await riley.post(`/console/approvals/${id}/approve`, { csrf: riley.csrf });
    expect(posted.status).toBe(403);
    expect(posted.html).toContain("finance_lead");
    expect(await refundsOfRun("A1002", run)).toHaveLength(0);
  });

  it("records a first approval as 1 of 2, keeps it across a restart, and executes on a second operator's", async () => {
    const { run, id } = await askAcmeRefund("A1003", 31_000);
    const dana = await signedInOperator("acme", ACME_OPERATORS.dana);
    const page = await dana.get(`/console/approvals/${id}`);
    expect(page.html).toContain("Approve (1 of 2)");
    const first = await dana.post(`/console/approvals/${id}/approve`, {
      csrf: dana.csrf,
      confirm_duplicate: "yes",
    });
    expect(first.status).toBe(303);
    const after = await dana.get(`/console/approvals/${id}`);
    expect(after.html).toContain("<strong>1 of 2</strong>");
    expect(after.html).toContain("You approved this (1 of 2)");
    expect(after.html).not.toContain(`action="/console/approvals/${id}/approve"`);
    expect(await refundsOfRun("A1003", run)).toHaveLength(0);

    await restartDurableObject(ledgerStubOf(run));
    const lee = await signedInOperator("acme", ACME_OPERATORS.lee);
    expect((await lee.get(`/console/approvals/${id}`)).html).toContain("Approve and execute");
    const second = await lee.post(`/console/approvals/${id}/approve`, {
      csrf: lee.csrf,
      confirm_duplicate: "yes",
    });
    expect(second.status).toBe(303);
    const done = await lee.get(`/console/approvals/${id}?decided=approve`);
    expect(done.html).toContain("<strong>2 of 2</strong>");
    expect(await refundsOfRun("A1003", run)).toHaveLength(1);
  });
});

/** What the proxy answers with this configuration: its start-up check's message when it refuses. */
async function startupMessage(overrides: { OPERATOR_KEYS?: string; TENANTS?: unknown }): Promise<string> {
  const response = await app.request("/v1/runs", { method: "POST" }, { ...env, ...overrides } as typeof env);
  const body = envelopeSchema().parse(await response.json());
  expect(response.status).toBe(500);
  return body.error?.message ?? "";
}

const DANA = "9127ebd65e603cd2234748ac9631a88434637c312e6946341b7ef0e172aa3681";
const LEE = "653560c9245a1beeaca3e7fee0a4d5cd04c8daed20166c1669a240bf354fe21e";

function operatorKeys(acme: unknown[]): string {
  const demo = JSON.parse(env.OPERATOR_KEYS) as Record<string, unknown>;
  return JSON.stringify({ ...demo, acme });
}

function tenantsWith(approvers: unknown): unknown {
  const tenants = (
    typeof env.TENANTS === "string" ? JSON.parse(env.TENANTS) : structuredClone(env.TENANTS)
  ) as Record<string, Record<string, unknown>>;
  return { ...tenants, acme: { ...tenants.acme, approvers } };
}

describe("who approves: bad configuration refuses to start, saying where", () => {
  it("a role that is not an identifier in OPERATOR_KEYS", async () => {
    const message = await startupMessage({
      OPERATOR_KEYS: operatorKeys([{ name: "Dana Reyes", sha256: DANA, roles: ["Finance Lead"] }]),
    });
    expect(message).toContain('OPERATOR_KEYS is invalid at "acme[0].roles[0]"');
    expect(message).toContain("a role is a lowercase identifier");
  });

  it("a tool naming a role no operator of a tenant holds, naming both", async () => {
    const message = await startupMessage({
      OPERATOR_KEYS: operatorKeys([{ name: "Dana Reyes", sha256: DANA }]),
      TENANTS: tenantsWith({}),
    });
    expect(message).toContain(
      'tool support.issue_refund names the role "support_lead", which no operator of tenant acme holds',
    );
  });

  it("an unknown role in a tenant's rule", async () => {
    const message = await startupMessage({
      TENANTS: tenantsWith({ support: { issue_refund: { rules: [{ above: 100, role: "finanse_lead" }] } } }),
    });
    expect(message).toContain(
      'TENANTS.acme.approvers.support.issue_refund.rules[0].role: unknown role "finanse_lead": no operator of tenant acme holds it',
    );
  });

  it("a two-person rule with fewer than two operators holding the role", async () => {
    const message = await startupMessage({
      OPERATOR_KEYS: operatorKeys([
        { name: "Dana Reyes", sha256: DANA, roles: ["support_lead", "finance_lead"] },
        { name: "Lee Park", sha256: LEE, roles: ["support_lead"] },
      ]),
    });
    expect(message).toContain("TENANTS.acme.approvers.support.issue_refund.two_person_above");
    expect(message).toContain('hold the role "finance_lead" there is only Dana Reyes');
  });

  it("a two-person rule met only by one person's two keys", async () => {
    const message = await startupMessage({
      OPERATOR_KEYS: operatorKeys([
        { name: "Dana Reyes", sha256: DANA, roles: ["support_lead", "finance_lead"] },
        { name: "Dana Reyes", sha256: LEE, roles: ["support_lead", "finance_lead"] },
      ]),
    });
    expect(message).toContain("there is only Dana Reyes");
  });

  it("a negative threshold", async () => {
    const message = await startupMessage({
      TENANTS: tenantsWith({ support: { issue_refund: { two_person_above: -5 } } }),
    });
    expect(message).toContain('TENANTS is invalid at "acme.approvers.support.issue_refund.two_person_above"');
    expect(message).toContain("(got -5)");
  });

  it("rules on a tool that is not the tenant's", async () => {
    const message = await startupMessage({
      TENANTS: tenantsWith({ support: { issue_refnd: { two_person_above: 10 } } }),
    });
    expect(message).toContain(
      'TENANTS.acme.approvers.support.issue_refnd: "issue_refnd" is not a tool of support',
    );
  });
});
