import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../src/approvals/model";
import type { SignedInOperator } from "../../src/auth/principal";
import { tenantConfigSchema } from "../../src/config/tenants";
import { ApprovalPage } from "../../src/console/views/approval-page";
import type { PreparedCall } from "../../src/machine/prepare";
import { withTaint } from "../../src/machine/taint";
import { catalog } from "../../src/tools";
import type { RunStatus } from "../../src/wire/run-status";

const taint = { call_id: "call_taint", tool: "search_refund_policy", at: "2026-01-01T00:00:00.000Z" };
const tool = (name: string) => {
  const found = catalog.find("support", name);
  if (!found) throw new Error(name);
  return found;
};
const prepared = (name: string, args: Record<string, unknown> = { x: 1 }): PreparedCall => ({
  toolName: name,
  tool: tool(name),
  rawArgs: args,
  args,
  refusal: null,
  approval: { required: false, reasons: [] },
});
const tenant = (tainted_runs?: unknown) =>
  tenantConfigSchema().parse({
    namespaces: ["support"],
    ceilings: { max_calls: 10, max_writes: 5, max_destructive: 1, deadline_s: 60 },
    max_refund_cents: 100,
    ...(tainted_runs === undefined ? {} : { tainted_runs }),
  });

describe("tainted-run policy", () => {
  it("defaults to require_approval for writes and destructive calls", () => {
    expect(tenant().tainted_runs).toEqual({ write: "require_approval", destructive: "require_approval" });
  });

  it.each(["create_internal_ticket", "issue_refund"])(
    "makes a tainted %s wait for a human, naming the call",
    (name) => {
      const out = withTaint(prepared(name), taint, tenant().tainted_runs);
      expect(out.refusal).toBeNull();
      expect(out.approval.required).toBe(true);
      expect(out.approval.reasons.join(" ")).toContain("call_taint (search_refund_policy)");
    },
  );

  it.each([
    ["create_internal_ticket", { write: "refuse" }],
    ["issue_refund", { destructive: "refuse" }],
  ] as const)("refuses a tainted %s under a refuse policy, naming the tainting call", (name, policy) => {
    const out = withTaint(prepared(name), taint, tenant(policy).tainted_runs);
    expect(out.args).toBeNull();
    expect(out.refusal).toMatchObject({
      code: "permission_error",
      side_effect_confirmed: false,
      recommended_next_action: "escalate_to_human",
    });
    expect(out.refusal?.message).toContain("call_taint (search_refund_policy)");
  });

  it("leaves reads, untainted runs and calls already refused alone", () => {
    const refuseAll = tenant({ write: "refuse", destructive: "refuse" }).tainted_runs;
    const read = prepared("lookup_order");
    expect(withTaint(read, taint, refuseAll)).toBe(read);
    const clean = prepared("issue_refund");
    expect(withTaint(clean, null, refuseAll)).toBe(clean);
  });
});

describe("approval page", () => {
  it("shows the text that tainted the run, escaped", async () => {
    const approval = {
      id: "apr_0123456789abcdef01234567",
      run_id: "run_1",
      tool: "create_internal_ticket",
      side_effect: "write",
      args: { customer_id: "C100", priority: "normal", summary: "A summary of ten chars" },
      reasons: ["the run read untrusted content in call call_taint (search_refund_policy)"],
      state: "rejected",
      created_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2026-01-02T00:00:00.000Z",
      idempotency_key: "idk_1",
      decided_by: "operator:x",
      decision_reason: "no",
      earlier_effects: [],
      limit: null,
    } as unknown as ApprovalRecord;
    const run = {
      state: "open",
      tainted_by: {
        ...taint,
        text: '[untrusted content m]\n<script>alert("x")</script> & <b>bold</b>\n[end]',
      },
    } as unknown as RunStatus;
    const session = {
      tenant: "acme",
      operator: "operator:x",
      csrf: "c",
      exp: 0,
      name: null,
      roles: [],
    } satisfies SignedInOperator;
    const node = ApprovalPage({
      environment: "sandbox",
      session,
      approval,
      run,
      traceLength: 1,
      now: Date.parse("2026-01-01T00:00:00.000Z"),
      money: new Map(),
      decided: false,
    });
    const html = String(await node);
    expect(html).toContain("Text that tainted the run");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;");
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<b>bold");
  });
});
