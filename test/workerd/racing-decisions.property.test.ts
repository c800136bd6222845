import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ApprovalRecord } from "../../src/wire/approval";
import { propertyPlans } from "../property-plan";
import { ACME_OPERATORS, callTool, openRun, refund, refundsOfRun, request, sandboxRequests } from "./helpers";

const plan = propertyPlans(env);

/**
 * Operators deciding one approval at once, through the operator API and the real run's ledger
 * (acme: a refund up to 20000 cents needs one support lead, above it a finance lead, above 30000 two
 * different ones; Riley holds only support_lead). Whatever order the run applies them in: at most
 * one refund goes out, with the approval's arguments; a 200 approval describes what executed (or,
 * while the approval still waits for a second approver, records its operator on its own
 * arguments); a 200 edit is of the arguments that executed or wait; a 200 rejection means nothing
 * executed; and a decision not applied is a 409 (or a 403 for a role), its operator nowhere in the
 * approval's record.
 */

type Operator = "dana" | "lee" | "riley";
type Kind = { kind: "edit"; amount: number } | { kind: "approve" } | { kind: "reject" };
type Made = { who: Operator; decision: Kind };

const AMOUNTS = [300, 400, 900, 25_000, 35_000];
const made: fc.Arbitrary<Kind> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("edit" as const), amount: fc.constantFrom(...AMOUNTS) }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: "approve" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reject" as const }) },
);
// Each operator decides once per case, so a decision's trace in the record is its operator's.
const decisions = fc
  .tuple(
    fc.shuffledSubarray(["dana", "lee", "riley"] as Operator[], { minLength: 2 }),
    fc.array(made, { minLength: 3, maxLength: 3 }),
  )
  .map(([who, kinds]) => who.map((operator, n): Made => ({ who: operator, decision: kinds[n] as Kind })));

const ORDER = "A1002";

function send(id: string, { who, decision }: Made) {
  const kind = decision.kind === "reject" ? "reject" : "approve";
  const body =
    decision.kind === "reject"
      ? { reason: "not now" }
      : {
          confirm_duplicate: true,
          ...(decision.kind === "edit" ? { args: refund(ORDER, decision.amount) } : {}),
        };
  return request(`/v1/approvals/${id}/${kind}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ACME_OPERATORS[who]}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const NAMES: Record<Operator, string> = { dana: "Dana Reyes", lee: "Lee Park", riley: "Riley Chen" };

/** Whether the approval's record holds anything its operator decided. */
function recorded(approval: ApprovalRecord, who: Operator): boolean {
  const name = NAMES[who];
  return (
    approval.decided_by_name === name ||
    approval.approvers.some((approver) => approver.name === name) ||
    approval.edit?.by_name === name
  );
}

describe("racing operator decisions (property)", () => {
  it("answers every decision with what happened: 200 only for what executed or was recorded, 409 for what was not applied", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(900, 25_000, 35_000), decisions, async (asked, made) => {
        const run = await openRun("acme");
        const held = await callTool(run, "issue_refund", refund(ORDER, asked));
        expect(held.body.error?.code, JSON.stringify(held.body.error)).toBe("approval_required");
        const id = held.body.approval?.id ?? "";
        const answers = await Promise.all(made.map((decision) => send(id, decision)));

        const { body } = await request(`/v1/approvals/${id}`, {
          headers: { authorization: `Bearer ${ACME_OPERATORS.dana}` },
        });
        const final = (body.data as { approval: ApprovalRecord }).approval;
        // What executed, by the sandbox's own log: the key of every refund request it received (a
        // key is the run, the tool and the canonical arguments, so it names the arguments sent).
        const sent = [
          ...new Set(
            (await sandboxRequests(run.id))
              .filter((entry) => entry.path === "/refunds")
              .map((entry) => entry.idempotency_key),
          ),
        ];
        expect(sent.length, "one call at most went out").toBeLessThanOrEqual(1);
        expect((await refundsOfRun(ORDER, run)).length).toBeLessThanOrEqual(1);
        if (final.state === "executed") expect(sent).toEqual([final.idempotency_key]);
        else expect(sent).toEqual([]);

        for (const [n, { who, decision }] of made.entries()) {
          const answer = answers[n];
          const context = JSON.stringify({ asked, made, n, error: answer?.body.error, final: final.state });
          expect([200, 403, 409, 502], context).toContain(answer?.status);
          if (answer?.status === 502) {
            // Applied, and the call it let run failed upstream: the answer says what the call did.
            expect(answer.body.error?.details?.execution, context).toMatch(/^(refused|not_sent|in_doubt)$/);
            expect(recorded(final, who), context).toBe(true);
            continue;
          }
          if (answer?.status !== 200) {
            // Not applied: its operator appears nowhere in the approval's record.
            expect(recorded(final, who), context).toBe(false);
            if (answer?.status === 409) expect(answer.body.error?.code).toBe("conflict_error");
            continue;
          }
          const answered = (answer.body.data as { approval: ApprovalRecord }).approval;
          if (decision.kind === "reject") {
            expect(final.state, context).toBe("rejected");
            continue;
          }
          if (decision.kind === "edit")
            expect(answered.args, context).toEqual(refund(ORDER, decision.amount));
          if (answered.state === "executed" || answered.state === "approved") {
            // Describes what executed: the answer's arguments are the refund the upstream made.
            expect(sent, context).toEqual([answered.idempotency_key]);
          } else {
            // Still waiting for a second approver: the answer records this operator's approval.
            expect(answered.state, context).toBe("pending");
            expect(
              answered.approvers.map((approver) => approver.name),
              context,
            ).toContain(NAMES[who]);
          }
        }
      }),
      plan({ seed: 20_261_207, numRuns: 15, soakAtMost: 150 }),
    );
  });
});
