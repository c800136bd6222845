import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { approverRequirement, holdsRole, samePerson } from "../../src/approvals/approvers";
import { APPROVAL_TTL_MS, type ApprovalRecord } from "../../src/approvals/model";
import { DEFAULT_LIMITS, tenantConfigSchema } from "../../src/config/tenants";
import { type DecideStep, decideApproval } from "../../src/machine/decide";
import { buildRequest } from "../../src/machine/request";
import { alarmRings } from "../../src/machine/run-events";
import type { CallRecord, RunMeta } from "../../src/machine/run-state";
import type { Write } from "../../src/machine/writes";
import { catalog } from "../../src/tools";
import { propertyPlans } from "../property-plan";
import { openAcmeRun } from "./support/open-run";
import { pendingApproval } from "./support/pending-approval";

const plan = propertyPlans(process.env);

/**
 * The two-person rule as the admission machine applies it (`src/machine/decide.ts`), with the
 * requirement a tenant's `approvers` setting gives (`src/approvals/approvers.ts`). The property
 * drives one approval through random decisions by operators (two keys of one person among them),
 * restarts (the approval read back from its stored JSON) and expiries, and checks that it executes
 * only after two different people holding the role approved, at most once, and never after a
 * rejection or an expiry.
 */

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const POLICY = "pol_current";
const TOOL = catalog.find("support", "issue_refund");
if (!TOOL) throw new Error("the demo catalog has no issue_refund");
const REFUND = TOOL;

const TENANT = tenantConfigSchema().parse({
  namespaces: ["support"],
  ceilings: DEFAULT_LIMITS,
  max_refund_cents: 100_000,
  approvers: {
    support: { issue_refund: { rules: [{ above: 20_000, role: "finance_lead" }], two_person_above: 30_000 } },
  },
});

/** The operators, with the person each one is: `ann` and `ann_old` are two keys of one person. */
const OPERATORS = {
  ann: { operator: "operator:aaaaaaaaaaaa", name: "Ann Lee", roles: ["finance_lead"], person: "ann" },
  ann_old: { operator: "operator:aaaaaaaaaaa2", name: "Ann  lee", roles: ["finance_lead"], person: "ann" },
  ben: {
    operator: "operator:bbbbbbbbbbbb",
    name: "Ben Ode",
    roles: ["support_lead", "finance_lead"],
    person: "ben",
  },
  cy: { operator: "operator:cccccccccccc", name: "Cy Ray", roles: ["support_lead"], person: "cy" },
  unnamed: { operator: "operator:dddddddddddd", name: null, roles: ["finance_lead"], person: "dd" },
} as const;
type OperatorName = keyof typeof OPERATORS;
const PERSON_OF = new Map<string, string>(
  Object.values(OPERATORS).map((operator) => [operator.operator, operator.person]),
);

describe("the approver requirement", () => {
  const requirement = (amount: number) =>
    approverRequirement(REFUND, { order_id: "A1001", amount_cents: amount, reason: "user_cancel" }, TENANT);

  it("keeps the tool's role up to the tenant's amount, raises it above, and asks two people above the two-person threshold", () => {
    expect(requirement(20_000)).toEqual({ roles: ["support_lead"], approvals: 1 });
    expect(requirement(20_001)).toEqual({ roles: ["finance_lead"], approvals: 1 });
    expect(requirement(30_000)).toEqual({ roles: ["finance_lead"], approvals: 1 });
    expect(requirement(30_001)).toEqual({ roles: ["finance_lead"], approvals: 2 });
  });

  it("lets anyone decide where no role is named, and only a holder where one is", () => {
    expect(holdsRole([], [])).toBe(true);
    expect(holdsRole(["finance_lead"], ["support_lead"])).toBe(false);
    expect(holdsRole(["finance_lead", "cfo"], ["cfo"])).toBe(true);
  });

  it("counts two keys under one name, or one id, as one person", () => {
    expect(samePerson(OPERATORS.ann, OPERATORS.ann_old)).toBe(true);
    expect(samePerson(OPERATORS.ann, OPERATORS.ben)).toBe(false);
    expect(samePerson(OPERATORS.unnamed, { operator: OPERATORS.unnamed.operator, name: "Someone" })).toBe(
      true,
    );
    expect(samePerson(OPERATORS.unnamed, { operator: "operator:eeeeeeeeeeee", name: null })).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// The property
// ---------------------------------------------------------------------------------------------

const ARGS = { order_id: "A1004", amount_cents: 35_000, reason: "user_cancel" };
const KEY = "idk_two_person";

interface Model {
  run: RunMeta;
  approval: ApprovalRecord;
  /** The stored form of the approval: what a restart reads back. */
  stored: string;
  record: CallRecord;
  now: number;
  sends: number;
  /** Persons whose approval was recorded when the call was sent. */
  sentAfter: string[] | null;
  /** What ended it before any send, if anything. */
  ended: "rejected" | "expired" | null;
}

function initialModel(): Model {
  const requirement = approverRequirement(REFUND, ARGS, TENANT);
  const run: RunMeta = openAcmeRun({ run_id: "run_two_person", catalog_version: "cat_test", t0: T0 });
  const approval = pendingApproval({
    tool: REFUND,
    run_id: run.run_id,
    key: KEY,
    args: ARGS,
    digest: "dig_two_person",
    policy: POLICY,
    requirement,
    t0: T0,
  });
  return {
    run,
    approval,
    stored: JSON.stringify(approval),
    record: {
      key: KEY,
      tool: REFUND.name,
      side_effect: REFUND.side_effect,
      state: "held",
      request: buildRequest(REFUND, ARGS, { key: KEY, callId: "call_first" }),
      envelope: null,
      sends: 0,
    },
    now: T0 + 1_000,
    sends: 0,
    sentAfter: null,
    ended: null,
  };
}

type Event =
  | { kind: "decide"; who: OperatorName; approve: boolean }
  | { kind: "restart" }
  | { kind: "time"; ms: number }
  | { kind: "alarm" };

const EVENT: fc.Arbitrary<Event> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("decide" as const),
      who: fc.constantFrom(...(Object.keys(OPERATORS) as OperatorName[])),
      // Mostly approvals: rejections end the sequence early.
      approve: fc.integer({ min: 0, max: 5 }).map((n) => n > 0),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("time" as const),
      ms: fc.integer({ min: 1, max: APPROVAL_TTL_MS / 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "alarm" as const }) },
);

/** Applies the machine's writes as the ledger would (src/ledger/commit.ts), to the stored form. */
function apply(model: Model, writes: readonly Write[]): void {
  let approval = JSON.parse(model.stored) as ApprovalRecord;
  for (const write of writes) {
    if (write.kind === "approval_approver") {
      approval = { ...approval, approvers: [...approval.approvers, write.approver] };
    } else if (write.kind === "approval_state") {
      approval = {
        ...approval,
        state: write.state,
        ...(write.decision
          ? {
              decided_at: new Date(write.decision.at).toISOString(),
              decided_by: write.decision.by,
              decided_by_name: write.decision.by_name,
              decision_reason: write.decision.reason,
            }
          : {}),
      };
    } else if (write.kind === "key_send") {
      model.sends += 1;
      model.sentAfter = approval.approvers.map((approver) => PERSON_OF.get(approver.operator) ?? "?");
      model.record = { ...model.record, state: "sending", sends: model.record.sends + 1 };
    }
  }
  model.stored = JSON.stringify(approval);
  model.approval = approval;
}

function step(model: Model, event: Event): DecideStep | null {
  switch (event.kind) {
    case "restart":
      // Everything in memory is gone: the approval is what storage holds.
      model.approval = JSON.parse(model.stored) as ApprovalRecord;
      return null;
    case "time":
      model.now += event.ms;
      return null;
    case "alarm": {
      const pending = model.approval.state === "pending" ? [model.approval] : [];
      apply(model, alarmRings(model.run, pending, model.now, POLICY));
      return null;
    }
    case "decide": {
      const operator = OPERATORS[event.who];
      const decided = decideApproval(
        {
          run: model.run,
          approval: model.approval,
          record: model.record,
          tool: REFUND,
          pending: model.approval.state === "pending" ? [model.approval] : [],
        },
        {
          decision: event.approve ? "approve" : "reject",
          operator: operator.operator,
          operator_name: operator.name,
          operator_roles: operator.roles,
          reason: event.approve ? null : "no",
          call_id: "call_operator",
          now: model.now,
          policy_version: POLICY,
        },
      );
      apply(model, decided.writes);
      return decided;
    }
  }
}

describe("property: the two-person rule under any interleaving", () => {
  it("executes only after two different people holding the role approved, at most once, never after a rejection or expiry", () => {
    fc.assert(
      fc.property(fc.array(EVENT, { minLength: 1, maxLength: 30 }), (events) => {
        const model = initialModel();
        expect(model.approval.approvals_required).toBe(2);
        for (const event of events) {
          const before = model.approval.state;
          const decided = step(model, event);
          if (before === "pending" && model.approval.state === "rejected") model.ended ??= "rejected";
          if (before === "pending" && model.approval.state === "expired") model.ended ??= "expired";
          if (decided?.kind === "send") {
            // The send's approvers: two different people, each holding the role.
            const people = new Set(model.sentAfter);
            expect(people.size).toBeGreaterThanOrEqual(2);
            for (const approver of model.approval.approvers) {
              const operator = Object.values(OPERATORS).find(
                (candidate) => candidate.operator === approver.operator,
              );
              expect(operator?.roles).toContain("finance_lead");
            }
            expect(model.ended).toBeNull();
          }
          // A first approval alone never sends; an operator without the role is never recorded.
          expect(model.sends).toBeLessThanOrEqual(1);
          expect(new Set(model.approval.approvers.map((a) => PERSON_OF.get(a.operator))).size).toBe(
            model.approval.approvers.length,
          );
          expect(model.approval.approvers.every((a) => a.operator !== OPERATORS.cy.operator)).toBe(true);
        }
        if (model.sends === 1) expect(model.approval.state).toBe("approved");
      }),
      plan({ seed: 20261202, numRuns: 400 }),
    );
  });

  it("executes on the second person's approval after a restart between the two", () => {
    const model = initialModel();
    expect(step(model, { kind: "decide", who: "ann", approve: true })?.kind).toBe("done");
    expect(model.approval).toMatchObject({ state: "pending", approvers: [{ name: "Ann Lee" }] });
    step(model, { kind: "restart" });
    expect(step(model, { kind: "decide", who: "ann_old", approve: true })).toMatchObject({
      kind: "done",
      refusal: { code: "conflict_error" },
    });
    expect(step(model, { kind: "decide", who: "cy", approve: true })).toMatchObject({
      kind: "done",
      refusal: { code: "permission_error", roles: ["finance_lead"] },
    });
    expect(step(model, { kind: "decide", who: "ben", approve: true })?.kind).toBe("send");
    expect(model.sends).toBe(1);
    expect(model.sentAfter).toEqual(["ann", "ben"]);
  });

  it("a single decision of one person, however often repeated and restarted, never executes", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              kind: fc.constant("decide" as const),
              who: fc.constantFrom<OperatorName>("ann", "ann_old"),
              approve: fc.constant(true),
            }),
            fc.constant({ kind: "restart" as const }),
            fc.constant({ kind: "alarm" as const }),
          ),
          { minLength: 1, maxLength: 20 },
        ),
        (events) => {
          const model = initialModel();
          for (const event of events) step(model, event);
          expect(model.sends).toBe(0);
          expect(model.approval.state).toBe("pending");
          expect(model.approval.approvers.length).toBeLessThanOrEqual(1);
        },
      ),
      plan({ seed: 20261203, numRuns: 200 }),
    );
  });
});
