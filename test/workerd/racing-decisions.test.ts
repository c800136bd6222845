import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../src/wire/approval";
import { ACME_OPERATORS, askAcmeRefund, refund, refundsOfRun, request } from "./helpers";

/**
 * Operators deciding one approval at the same moment (acme: issue_refund up to 20000 cents needs
 * one support lead). Whichever decision the run applies first is what executes; every other one is
 * either that same decision again (200) or a 409 saying it was not applied, never a 200 that
 * describes something that did not go out. Each reproduction runs a few times, since which decision
 * comes first varies.
 */

const TRIALS = 5;

type Operator = keyof typeof ACME_OPERATORS;

function approveAs(who: Operator, id: string, args?: Record<string, unknown>) {
  return request(`/v1/approvals/${id}/approve`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACME_OPERATORS[who]}`, "content-type": "application/json" },
    body: JSON.stringify({ confirm_duplicate: true, ...(args ? { args } : {}) }),
  });
}

const approvalIn = (body: { data?: unknown }) => (body.data as { approval: ApprovalRecord }).approval;

describe("operators deciding one approval at once", () => {
  it("executes one of two edits made at once, and refuses the other with 409 saying it was not applied", async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const { run, id } = await askAcmeRefund("A1003", 900);
      const [a, b] = await Promise.all([
        approveAs("dana", id, refund("A1003", 400)),
        approveAs("lee", id, refund("A1003", 300)),
      ]);
      const executed = (await refundsOfRun("A1003", run)).map((made) => made.amount_cents);
      expect(executed).toHaveLength(1);
      const answers = [
        { amount: 400, answer: a },
        { amount: 300, answer: b },
      ];
      const winner = answers.find(({ amount }) => amount === executed[0]);
      const loser = answers.find(({ amount }) => amount !== executed[0]);
      expect(winner?.answer.status, JSON.stringify(winner?.answer.body.error)).toBe(200);
      expect(approvalIn(winner?.answer.body ?? {})).toMatchObject({
        state: "executed",
        args: refund("A1003", executed[0] as number),
      });
      expect(loser?.answer.status, `trial ${trial}`).toBe(409);
      expect(loser?.answer.body.error?.code).toBe("conflict_error");
      expect(loser?.answer.body.error?.message).toContain("not applied");
    }
  });

  it("answers a plain approval and an edit made at once with what executed: 200 only for the decision that went out", async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const { run, id } = await askAcmeRefund("A1004", 900);
      // Sent in either order: which request reaches the run first varies with it.
      const sent = [() => approveAs("riley", id), () => approveAs("dana", id, refund("A1004", 400))];
      const [plain, edit] =
        trial % 2 === 0
          ? await Promise.all(sent.map((send) => send()))
          : (await Promise.all([...sent].reverse().map((send) => send()))).reverse();
      if (!plain || !edit) throw new Error("both decisions were answered");
      const executed = (await refundsOfRun("A1004", run)).map((made) => made.amount_cents);
      expect(executed).toHaveLength(1);
      for (const answer of [plain, edit]) {
        if (answer.status === 200) {
          expect(approvalIn(answer.body)).toMatchObject({ args: refund("A1004", executed[0] as number) });
        } else {
          expect(answer.status, JSON.stringify(answer.body.error)).toBe(409);
          expect(answer.body.error?.message).toContain("not applied");
        }
      }
      // The edit is answered 200 exactly when its arguments went out.
      expect(edit.status, `trial ${trial}: ${JSON.stringify(edit.body.error)}`).toBe(
        executed[0] === 400 ? 200 : 409,
      );
    }
  });
});
