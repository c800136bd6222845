import { describe, expect, it } from "vitest";
import type { EmailDraft } from "../../sandbox/src/model";
import { annotationsFor } from "../../src/specs/mcp";
import { signedInOperator } from "./console-client";
import { callTool, decide, openRun, sandbox, sandboxRequests, type TestRun } from "./helpers";

type Draft = EmailDraft;

interface SentEmail {
  email_id: string;
  customer_id: string;
  subject: string;
  body: string;
  run_id: string;
  draft_id: string | null;
  draft_version: number | null;
}

async function emailsOfRun(run: TestRun): Promise<SentEmail[]> {
  const { emails } = await sandbox<{ emails: SentEmail[] }>(`/_admin/emails?tenant=${run.tenant}`);
  return emails.filter((email) => email.run_id === run.id);
}

async function draftFor(run: TestRun, notes: string): Promise<Draft> {
  const drafted = await callTool(run, "draft_customer_email", {
    customer_id: "C100",
    template: "refund_confirmation",
    order_id: "A1001",
    notes,
  });
  expect(drafted.status, JSON.stringify(drafted.body.error)).toBe(200);
  return drafted.body.data as Draft;
}

describe("the draft class: draft_customer_email then send_customer_email", () => {
  it("stores a draft and returns its id, version and rendered text; a repeat replays the same draft", async () => {
    const run = await openRun("acme");
    const args = { customer_id: "C100", template: "apology" };
    const first = await callTool(run, "draft_customer_email", args);
    expect(first.body.outcome).toBe("success");
    expect(first.body.idempotency_key).toMatch(/^idk_/);
    expect(first.body.replayed).toBe(false);
    const draft = first.body.data as Draft;
    expect(draft).toMatchObject({ draft_id: expect.stringMatching(/^dr_/), customer_id: "C100", version: 1 });
    expect(draft.subject).toBe("We're sorry");
    expect(draft.body).toContain("We're sorry about your recent experience");
    // A draft spends a write unit, never a destructive one.
    expect(first.body.budget).toMatchObject({ writes_left: 4, destructive_left: 1 });

    const again = await callTool(run, "draft_customer_email", args);
    expect(again.body.replayed).toBe(true);
    expect(again.body.idempotency_key).toBe(first.body.idempotency_key);
    expect((again.body.data as Draft).draft_id).toBe(draft.draft_id);
    const posts = (await sandboxRequests(run.id)).filter(
      (entry) => entry.method === "POST" && entry.path === "/email-drafts",
    );
    expect(posts).toHaveLength(1);
  });

  it("sends exactly the approved draft's text after a human approves, and checks it with a read", async () => {
    const run = await openRun("acme");
    const draft = await draftFor(run, "Ask us anything.");
    const send = { draft_id: draft.draft_id, draft_version: draft.version };
    const asked = await callTool(run, "send_customer_email", send);
    expect(asked.body.error?.code).toBe("approval_required");
    expect(await emailsOfRun(run)).toEqual([]);

    const approved = await decide(asked.body.approval?.id ?? "", "approve");
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({
      approval: { state: "executed", result: { outcome: "success" } },
    });

    const emails = await emailsOfRun(run);
    expect(emails).toHaveLength(1);
    expect(emails[0]).toMatchObject({
      customer_id: "C100",
      subject: draft.subject,
      body: draft.body,
      draft_id: draft.draft_id,
      draft_version: 1,
    });
    const after = await callTool(run, "send_customer_email", send);
    expect(after.body.outcome).toBe("success");
    expect(after.body.data).toMatchObject({ subject: draft.subject, body: draft.body });
    // The postcondition read the sent email back.
    const reads = (await sandboxRequests(run.id)).filter(
      (entry) => entry.method === "GET" && entry.path.startsWith("/emails/"),
    );
    expect(reads.length).toBeGreaterThanOrEqual(1);
  });

  it("sends nothing when the draft is edited between approval request and send, and says why", async () => {
    const run = await openRun("acme");
    const draft = await draftFor(run, "Your refund is 10.00.");
    const send = { draft_id: draft.draft_id, draft_version: draft.version };
    const asked = await callTool(run, "send_customer_email", send);
    expect(asked.body.error?.code).toBe("approval_required");

    const edited = await sandbox<Draft>(`/_admin/email-drafts/${draft.draft_id}?tenant=acme`, {
      method: "PUT",
      body: JSON.stringify({ body: "Your refund is 1000.00. Click here: http://evil.example" }),
    });
    expect(edited.version).toBe(2);

    const approved = await decide(asked.body.approval?.id ?? "", "approve");
    expect(approved.body.data).toMatchObject({
      approval: { result: { outcome: "terminal_failure", error: { code: "conflict_error" } } },
    });
    expect(await emailsOfRun(run)).toEqual([]);

    const after = await callTool(run, "send_customer_email", send);
    expect(after.body.outcome).toBe("terminal_failure");
    expect(after.body.error?.code).toBe("conflict_error");
    expect(after.body.error?.message).toMatch(/edited|version/i);
    expect(await emailsOfRun(run)).toEqual([]);
  });

  it("shows the operator the draft's exact text on the approval page, and warns once it was edited", async () => {
    const run = await openRun("acme");
    const draft = await draftFor(run, "Tracking number 1Z999.");
    const asked = await callTool(run, "send_customer_email", {
      draft_id: draft.draft_id,
      draft_version: draft.version,
    });
    const client = await signedInOperator();
    const page = await client.get(`/console/approvals/${asked.body.approval?.id}`);
    expect(page.html).toContain("Email that will be sent");
    expect(page.html).toContain("Tracking number 1Z999.");
    expect(page.html).not.toContain("was edited since");
    await sandbox(`/_admin/email-drafts/${draft.draft_id}?tenant=acme`, {
      method: "PUT",
      body: JSON.stringify({ body: "A different text." }),
    });
    const after = await client.get(`/console/approvals/${asked.body.approval?.id}`);
    expect(after.html).toContain("was edited since (now version 2)");
  });

  it("takes no free text for a send: subject and body are unknown fields", async () => {
    const run = await openRun("acme");
    const sent = await callTool(run, "send_customer_email", {
      customer_id: "C100",
      subject: "Hi",
      body: "Anything the model wrote",
    });
    expect(sent.body.error?.code).toBe("validation_error");
    const fields = (sent.body.error?.problems ?? []).map((problem: { field: string }) => problem.field);
    expect(fields).toEqual(expect.arrayContaining(["draft_id", "draft_version", "subject", "body"]));
  });

  it("annotates a draft as neither read-only nor destructive, and idempotent", () => {
    expect(annotationsFor("draft", false)).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
  });
});
