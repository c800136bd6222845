import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { approverRequirement } from "../../src/approvals/approvers";
import { APPROVAL_TTL_MS, type ApprovalRecord } from "../../src/approvals/model";
import { DEFAULT_LIMITS, tenantConfigSchema } from "../../src/config/tenants";
import { canonicalJson } from "../../src/core/canonical-json";
import { deriveIdempotencyKey } from "../../src/core/idempotency-key";
import { decideApproval } from "../../src/machine/decide";
import { prepareEdit } from "../../src/machine/edit";
import { buildRequest } from "../../src/machine/request";
import { alarmRings } from "../../src/machine/run-events";
import type { CallRecord, RunMeta } from "../../src/machine/run-state";
import type { Write } from "../../src/machine/writes";
import { catalog } from "../../src/tools";
import type { CapLimit } from "../../src/wire/effects";
import { propertyPlans } from "../property-plan";
import { openAcmeRun } from "./support/open-run";
import { pendingApproval } from "./support/pending-approval";

const plan = propertyPlans(process.env);

/**
 * Approve with edit as the admission machine applies it (`src/machine/edit.ts`, `decide.ts`). The
 * property drives one refund approval through random approvals, edits (to amounts that need more or
 * fewer people, to the policy's limit and beyond), rejections, restarts and expiries, and checks:
 * at most one request leaves; it is the approval's arguments at that moment, under their own key;
 * once edited, the call as asked is never the one sent unless an operator edited it back; who
 * approves never falls below what the call as asked needed; one key only is ever held; and an
 * edit goes over the run's value cap only when the call as asked did (however it was edited since).
 */

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const POLICY = "pol_current";
const TOOL = catalog.find("support", "issue_refund");
if (!TOOL) throw new Error("the demo catalog has no issue_refund");
const REFUND = TOOL;

const TENANT = tenantConfigSchema().parse({
  namespaces: ["support"],
  ceilings: DEFAULT_LIMITS,
  max_refund_cents: 50_000,
  owns: { order_id: "^A\\d{4}$" },
  approvers: {
    support: { issue_refund: { rules: [{ above: 20_000, role: "finance_lead" }], two_person_above: 30_000 } },
  },
});

const OPERATORS = {
  ann: { operator: "operator:aaaaaaaaaaaa", name: "Ann Lee", roles: ["finance_lead"] },
  ben: { operator: "operator:bbbbbbbbbbbb", name: "Ben Ode", roles: ["support_lead", "finance_lead"] },
  cy: { operator: "operator:cccccccccccc", name: "Cy Ray", roles: ["support_lead"] },
} as const;
type OperatorName = keyof typeof OPERATORS;

const RUN: RunMeta = openAcmeRun({ run_id: "run_edit", catalog_version: "cat_test", t0: T0 });

/** The run's USD cap a call over `cap` shows on its approval, or null when it fits. */
function overCap(amount: number, cap: number): CapLimit | null {
  if (amount <= cap) return null;
  return {
    cap: "per_run",
    currency: "USD",
    subject: null,
    limit: cap,
    used: 0,
    reserved: 0,
    remaining: cap,
    amount,
  };
}

const refundArgs = (amount: number) => ({ order_id: "A1004", amount_cents: amount, reason: "user_cancel" });

interface Model {
  /** The run's USD cap (Infinity: none). */
  cap: number;
  approval: ApprovalRecord;
  stored: string;
  records: Map<string, CallRecord>;
  now: number;
  /** The request bodies sent, in order. */
  sent: string[];
  /** The approval's arguments when each was sent. */
  sentArgs: string[];
  /** The approvers and requirement when the call was sent. */
  sentWith: { approvers: string[]; required: number; roles: string[] } | null;
  /** The amounts of the edits refused as going over a cap the call as asked did not. */
  refusedOverCap: number[];
}

async function initialModel(amount: number, cap = Number.POSITIVE_INFINITY): Promise<Model> {
  const args = refundArgs(amount);
  const key = await deriveIdempotencyKey({ tenant: "acme", runId: RUN.run_id, tool: REFUND.name, args });
  const requirement = approverRequirement(REFUND, args, TENANT);
  const pending = pendingApproval({
    tool: REFUND,
    run_id: RUN.run_id,
    key,
    args,
    digest: `digest-${amount}`,
    policy: POLICY,
    requirement,
    t0: T0,
  });
  const approval = { ...pending, limit: overCap(amount, cap) };
  const record: CallRecord = {
    key,
    tool: REFUND.name,
    side_effect: REFUND.side_effect,
    state: "held",
    request: buildRequest(REFUND, args, { key, callId: "call_first" }),
    envelope: null,
    sends: 0,
  };
  return {
    cap,
    approval,
    stored: JSON.stringify(approval),
    records: new Map([[key, record]]),
    now: T0 + 1_000,
    sent: [],
    sentArgs: [],
    sentWith: null,
    refusedOverCap: [],
  };
}

/** Applies the machine's writes as the ledger would (src/ledger/commit.ts), to the stored form. */
function apply(model: Model, writes: readonly Write[]): void {
  let approval = JSON.parse(model.stored) as ApprovalRecord;
  for (const write of writes) {
    switch (write.kind) {
      case "approval_edit":
        approval = { ...approval, ...write.edited };
        break;
      case "approval_approver":
        approval = { ...approval, approvers: [...approval.approvers, write.approver] };
        break;
      case "approval_state":
        approval = { ...approval, state: write.state };
        break;
      case "key_drop":
        if (model.records.get(write.key)?.state === "held") model.records.delete(write.key);
        break;
      case "key_hold":
        model.records.set(write.record.key, write.record);
        break;
      case "key_send": {
        const record = model.records.get(write.key);
        model.sent.push(write.request.body ?? "");
        model.sentArgs.push(canonicalJson(approval.args));
        model.sentWith = {
          approvers: approval.approvers.map((approver) => approver.operator),
          required: approval.approvals_required,
          roles: approval.approver_roles,
        };
        if (record) model.records.set(write.key, { ...record, state: "sending", sends: record.sends + 1 });
        break;
      }
      default:
        break;
    }
  }
  model.stored = JSON.stringify(approval);
  model.approval = approval;
}

type Event =
  | { kind: "approve" | "reject"; who: OperatorName }
  | { kind: "edit"; who: OperatorName; amount: number }
  | { kind: "restart" }
  | { kind: "time"; ms: number }
  | { kind: "alarm" };

const WHO = fc.constantFrom(...(Object.keys(OPERATORS) as OperatorName[]));
const EVENT: fc.Arbitrary<Event> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("approve" as const), who: WHO }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reject" as const), who: WHO }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("edit" as const),
      who: WHO,
      amount: fc.constantFrom(900, 5_000, 15_000, 25_000, 35_000, 50_000, 60_000),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "restart" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("time" as const),
      ms: fc.integer({ min: 1, max: APPROVAL_TTL_MS / 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "alarm" as const }) },
);

async function step(model: Model, event: Event): Promise<void> {
  switch (event.kind) {
    case "restart":
      model.approval = JSON.parse(model.stored) as ApprovalRecord;
      return;
    case "time":
      model.now += event.ms;
      return;
    case "alarm":
      apply(
        model,
        alarmRings(RUN, model.approval.state === "pending" ? [model.approval] : [], model.now, POLICY),
      );
      return;
    default: {
      const operator = OPERATORS[event.who];
      let editPlan = null;
      const amount = event.kind === "edit" ? event.amount : 0;
      if (event.kind === "edit" && model.approval.state === "pending") {
        const prepared = await prepareEdit(catalog, {
          run: RUN,
          tenant: TENANT,
          tool: REFUND,
          approval: model.approval,
          args: refundArgs(event.amount),
        });
        if (prepared.kind === "refused") {
          expect(event.amount).toBeGreaterThan(50_000);
          return;
        }
        editPlan = prepared.kind === "edit" ? prepared.plan : null;
      }
      const record = model.records.get(model.approval.idempotency_key) ?? null;
      const decided = decideApproval(
        {
          run: RUN,
          approval: model.approval,
          record,
          tool: REFUND,
          pending: model.approval.state === "pending" ? [model.approval] : [],
          edit: editPlan
            ? {
                record: model.records.get(editPlan.key) ?? null,
                check: null,
                run_over: overCap(amount, model.cap),
              }
            : null,
        },
        {
          decision: event.kind === "reject" ? "reject" : "approve",
          operator: operator.operator,
          operator_name: operator.name,
          operator_roles: operator.roles,
          reason: event.kind === "reject" ? "no" : null,
          call_id: "call_operator",
          now: model.now,
          policy_version: POLICY,
          edit: editPlan,
        },
      );
      apply(model, decided.writes);
      if (decided.kind === "done" && decided.refusal?.code !== "permission_error") {
        if (decided.refusal?.reason === "edit_over_cap") model.refusedOverCap.push(amount);
      }
    }
  }
}

describe("property: approve with edit under any interleaving", () => {
  it("sends at most once, the approval's arguments of that moment, approved by enough people holding a role never below the asked call's", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(900, 15_000, 25_000, 35_000),
        fc.constantFrom(Number.POSITIVE_INFINITY, 30_000, 40_000),
        fc.array(EVENT, { minLength: 1, maxLength: 25 }),
        async (amount, cap, events) => {
          const model = await initialModel(amount, cap);
          const asked = {
            args: refundArgs(amount),
            requirement: approverRequirement(REFUND, refundArgs(amount), TENANT),
          };
          const askedBody = model.records.get(model.approval.idempotency_key)?.request.body;
          for (const event of events) {
            await step(model, event);
            expect(model.sent.length).toBeLessThanOrEqual(1);
            // Refused as over a cap exactly when the asked call fit it and the edit does not.
            for (const refused of model.refusedOverCap) {
              expect(amount).toBeLessThanOrEqual(cap);
              expect(refused).toBeGreaterThan(cap);
            }
            // One key is held while the approval waits: the one it binds.
            const held = [...model.records.values()].filter((record) => record.state === "held");
            if (model.approval.state === "pending") {
              expect(held.map((record) => record.key)).toEqual([model.approval.idempotency_key]);
            }
          }
          const [body] = model.sent;
          if (body === undefined) return;
          const sentArgs = JSON.parse(model.sentArgs[0] ?? "{}") as Record<string, unknown>;
          // What left is what the approval held when it was sent, never the asked call's bytes otherwise.
          expect(JSON.parse(body)).toMatchObject({ amount_cents: sentArgs.amount_cents });
          if (body === askedBody) expect(sentArgs).toEqual(asked.args);
          // Who approved: enough different people, each holding a role at least the asked call's.
          // The floor, worked out apart from the product: the larger amount's role, the most people.
          const larger = Math.max(amount, Number(sentArgs.amount_cents));
          const floor = {
            roles: approverRequirement(REFUND, refundArgs(larger), TENANT).roles,
            approvals: Math.max(
              asked.requirement.approvals,
              approverRequirement(REFUND, sentArgs, TENANT).approvals,
            ),
          };
          const sentWith = model.sentWith;
          expect(sentWith?.required).toBeGreaterThanOrEqual(floor.approvals);
          expect(sentWith?.roles).toEqual(floor.roles);
          if ((sentWith?.required ?? 1) > 1)
            expect(new Set(sentWith?.approvers).size).toBeGreaterThanOrEqual(2);
          // Over the cap only when the call as asked was: an edit back under it changes nothing.
          if (Number(sentArgs.amount_cents) > cap) expect(amount).toBeGreaterThan(cap);
        },
      ),
      plan({ seed: 20261202, numRuns: 300 }),
    );
  });

  it("never sends the call as asked once an operator edited it, whatever is decided after", async () => {
    const model = await initialModel(900);
    const askedBody = model.records.get(model.approval.idempotency_key)?.request.body;
    await step(model, { kind: "edit", who: "cy", amount: 5_000 });
    expect(model.sent).toHaveLength(1);
    expect(model.sent[0]).not.toBe(askedBody);
    expect(JSON.parse(model.sent[0] ?? "{}")).toMatchObject({ amount_cents: 5_000 });
    for (const who of ["ann", "ben", "cy"] as const) await step(model, { kind: "approve", who });
    expect(model.sent).toHaveLength(1);
  });

  it("holds a second edit to the call as asked and itself, not to the edit it replaces", async () => {
    // $9.00 asked; Ben edits it to $500.00, which needs a finance lead and a second person.
    const model = await initialModel(900);
    await step(model, { kind: "edit", who: "ben", amount: 50_000 });
    expect(model.approval).toMatchObject({ approver_roles: ["finance_lead"], approvals_required: 2 });
    // Cy may not act on it now; Ann, a finance lead only, may not decide the $9.00 asked.
    await step(model, { kind: "edit", who: "cy", amount: 900 });
    await step(model, { kind: "edit", who: "ann", amount: 900 });
    expect(model.approval.args).toMatchObject({ amount_cents: 50_000 });
    expect(model.sent).toHaveLength(0);
    // Ben, who holds both roles, edits it back: one support lead, as the asked call needed.
    await step(model, { kind: "edit", who: "ben", amount: 900 });
    expect(model.sent).toHaveLength(1);
    expect(JSON.parse(model.sent[0] ?? "{}")).toMatchObject({ amount_cents: 900 });
    expect(model.sentWith).toMatchObject({ roles: ["support_lead"], required: 1 });
  });

  it("lets a later edit go over a cap the call as asked went over, after an edit back under it", async () => {
    // $350.00 asked, over the run's $300.00 cap and needing two people; Ben edits it to $9.00.
    const model = await initialModel(35_000, 30_000);
    await step(model, { kind: "edit", who: "ben", amount: 900 });
    expect(model.approval).toMatchObject({ state: "pending", limit: null, approvals_required: 2 });
    expect(model.approval.edit?.asked_limit).toMatchObject({ cap: "per_run", amount: 35_000 });
    // Ann edits it to $500.00: over the cap again, as the call as asked was, so it stands.
    await step(model, { kind: "edit", who: "ann", amount: 50_000 });
    expect(model.refusedOverCap).toEqual([]);
    expect(model.approval).toMatchObject({ args: { amount_cents: 50_000 }, limit: { amount: 50_000 } });
    expect(model.approval.edit?.asked_limit).toMatchObject({ amount: 35_000 });
    await step(model, { kind: "approve", who: "ben" });
    expect(JSON.parse(model.sent[0] ?? "{}")).toMatchObject({ amount_cents: 50_000 });
  });

  it("refuses an edit over a cap the call as asked fitted, and keeps the approval waiting", async () => {
    const model = await initialModel(25_000, 30_000);
    await step(model, { kind: "edit", who: "ben", amount: 35_000 });
    expect(model.refusedOverCap).toEqual([35_000]);
    expect(model.approval).toMatchObject({ state: "pending", args: { amount_cents: 25_000 }, edit: null });
    expect(model.sent).toEqual([]);
  });
});
