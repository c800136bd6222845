import { describe, expect, it } from "vitest";
import type { Receipt } from "../../../src/wire/audit";
import { armFault, asOperator, callTool, openRun, refundsOf } from "../helpers";

/**
 * A write in doubt that a read settles, as the audit log records it: `issue_refund_v0` (./catalog.ts)
 * goes to an upstream that ignores keys, so a lost answer is settled by the read its tool declares.
 */

async function receiptsOf(runId: string): Promise<Receipt[]> {
  const { body } = await asOperator(`/v1/audit?run_id=${runId}`, {}, "globex");
  return (body.data as { receipts: Receipt[] }).receipts;
}

describe("the audit of a write settled by a read", () => {
  it("records the refund a read found after its answer was lost: made, settled after doubt, and by which read", async () => {
    const run = await openRun("globex");
    await armFault(run.id, { mode: "truncated", path_prefix: "/v0/refunds", times: 1 });
    const args = { order_id: "B2002", amount_cents: 215, reason: "price_error" };
    const first = await callTool(run, "issue_refund_v0", args);
    expect(first.body.outcome, JSON.stringify(first.body.error)).toBe("success");
    const refund = ((await refundsOf("B2002")) as Array<{ refund_id: string; amount_cents: number }>).find(
      (made) => made.amount_cents === 215,
    );
    expect(await receiptsOf(run.id)).toMatchObject([
      {
        type: "effect.outcome",
        tool: { name: "issue_refund_v0" },
        call: { args },
        upstream: { outcome: "made", external_id: refund?.refund_id, settled_after_doubt: true },
        read_back: { kind: "settle", verdict: "found" },
      },
    ]);
  });

  it("records a write a read proved absent as not made, and the resend that made it", async () => {
    const run = await openRun("globex");
    await armFault(run.id, { mode: "bad_gateway", path_prefix: "/v0/refunds", times: 1 });
    const args = { order_id: "B2003", amount_cents: 216, reason: "price_error" };
    expect((await callTool(run, "issue_refund_v0", args)).body.error?.side_effect_confirmed).toBe(false);
    expect((await callTool(run, "issue_refund_v0", args)).body.outcome).toBe("success");
    expect(await receiptsOf(run.id)).toMatchObject([
      { upstream: { outcome: "not_made", status: 502 }, read_back: { kind: "settle", verdict: "absent" } },
      {
        upstream: { outcome: "made", settled_after_doubt: true },
        read_back: { kind: "postcondition", verdict: "held" },
      },
    ]);
  });
});
