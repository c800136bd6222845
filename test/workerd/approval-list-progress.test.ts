import { describe, expect, it } from "vitest";
import type { ApprovalSummary } from "../../src/approvals/model";
import { type ApprovalListItem, ApprovalListItemSchema } from "../../src/wire/approval";
import { signedInOperator } from "./console-client";
import {
  ACME_OPERATORS,
  askAcmeRefund,
  asOperator,
  directoryStubOf,
  refundsOfRun,
  request,
  type TestRun,
} from "./helpers";

function approveAs(who: keyof typeof ACME_OPERATORS, id: string) {
  return request(`/v1/approvals/${id}/approve`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACME_OPERATORS[who]}`, "content-type": "application/json" },
    body: JSON.stringify({ reason: "checked the order", confirm_duplicate: true }),
  });
}

/** The approval as `GET /v1/approvals` lists it, checked against the strict wire schema. */
async function listed(run: TestRun, id: string): Promise<ApprovalListItem> {
  const { status, body } = await asOperator(`/v1/approvals?state=all&run_id=${run.id}`);
  expect(status, JSON.stringify(body.error)).toBe(200);
  const items = (body.data as { approvals: unknown[] }).approvals.map((item) =>
    ApprovalListItemSchema.parse(item),
  );
  const item = items.find((candidate) => candidate.id === id);
  if (!item) throw new Error(`approval ${id} is not listed`);
  return item;
}

/** The table row of the console page that names this approval. */
function rowOf(html: string, id: string): string {
  const row = html.split(/<tr\b/).find((part) => part.includes(id));
  if (!row) throw new Error(`no row of ${id} on the page`);
  return row;
}

const approver = (name: string) =>
  expect.objectContaining({ name, operator: expect.stringMatching(/^operator:/), at: expect.any(String) });

describe("approval lists show a two-person approval's progress", () => {
  it("lists who may decide and how many must approve, then each approval as it is recorded", async () => {
    const { run, id } = await askAcmeRefund("A1004", 35_000);
    expect(await listed(run, id)).toMatchObject({
      state: "pending",
      approver_roles: ["finance_lead"],
      approvals_required: 2,
      approvers: [],
    });

    expect((await approveAs("dana", id)).status).toBe(200);
    // The first approval changes no state, yet the list shows it at once.
    expect(await listed(run, id)).toMatchObject({
      state: "pending",
      approvals_required: 2,
      approvers: [approver("Dana Reyes")],
    });
    expect(await refundsOfRun("A1004", run)).toHaveLength(0);

    // The same person's second key is refused and changes nothing of the listed copy.
    expect((await approveAs("dana_second_key", id)).status).toBe(409);
    expect((await listed(run, id)).approvers).toHaveLength(1);

    expect((await approveAs("lee", id)).status).toBe(200);
    expect(await listed(run, id)).toMatchObject({
      state: "executed",
      approvals_required: 2,
      approvers: [approver("Dana Reyes"), approver("Lee Park")],
    });
    expect(await refundsOfRun("A1004", run)).toHaveLength(1);
  });

  it("lists an approval one operator decides with one required and no approvers", async () => {
    const { run, id } = await askAcmeRefund("A1001", 450);
    expect(await listed(run, id)).toMatchObject({
      approver_roles: ["support_lead"],
      approvals_required: 1,
      approvers: [],
    });
    const console = await signedInOperator("acme", ACME_OPERATORS.dana);
    expect(rowOf((await console.get("/console")).html, id)).not.toContain(" of 1");
  });

  it("never moves a listed approval back to fewer approvals when an older summary arrives late", async () => {
    const { run, id } = await askAcmeRefund("A1003", 31_000);
    const { duplicates: _, ...before } = await listed(run, id);
    expect((await approveAs("dana", id)).status).toBe(200);
    const after = await listed(run, id);
    expect(after.approvers).toHaveLength(1);

    // The "0 of 2" summary, delivered again after the "1 of 2" was.
    await directoryStubOf("acme").upsert(before satisfies ApprovalSummary, "acme");
    expect(await listed(run, id)).toEqual(after);
  });

  it("shows 1 of 2 in the console's pending list and history, with who approved", async () => {
    const { run, id } = await askAcmeRefund("A1005", 32_000);
    const dana = await signedInOperator("acme", ACME_OPERATORS.dana);
    expect(rowOf((await dana.get("/console")).html, id)).toContain("<strong>0 of 2</strong> approvals");

    const first = await dana.post(`/console/approvals/${id}/approve`, {
      csrf: dana.csrf,
      confirm_duplicate: "yes",
    });
    expect(first.status).toBe(303);
    const pendingRow = rowOf((await dana.get("/console")).html, id);
    expect(pendingRow).toContain("<strong>1 of 2</strong> approvals: Dana Reyes");
    const fragmentRow = rowOf((await dana.get("/console/fragments/pending")).html, id);
    expect(fragmentRow).toContain("<strong>1 of 2</strong> approvals: Dana Reyes");
    const historyRow = rowOf((await dana.get(`/console/approvals?run_id=${run.id}`)).html, id);
    expect(historyRow).toContain("<strong>1 of 2</strong> approvals: Dana Reyes");
    expect(await refundsOfRun("A1005", run)).toHaveLength(0);
  });
});
