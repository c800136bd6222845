import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { approverRequirement } from "../../src/approvals/approvers";
import type { ApprovalRecord } from "../../src/approvals/model";
import { DEFAULT_LIMITS, tenantConfigSchema } from "../../src/config/tenants";
import { deriveIdempotencyKey } from "../../src/core/idempotency-key";
import type { TenantCheck } from "../../src/effects/reasons";
import type { Env } from "../../src/env";
import type { CallInput, DecideInput } from "../../src/ledger/ledger-api";
import { buildRequest } from "../../src/machine/request";
import type { CallRecord, RunMeta } from "../../src/machine/run-state";
import type { Write } from "../../src/machine/writes";
import { catalog } from "../../src/tools";
import { success } from "../../src/wire/envelope";
import { editOf } from "../../src/workflow/decision";
import type { RunPorts } from "../../src/workflow/ports";
import { rateRefusal } from "../../src/workflow/refusals";
import { claimTenantWide } from "../../src/workflow/tenant-wide";
import { openAcmeRun } from "./support/open-run";
import { pendingApproval } from "./support/pending-approval";

/**
 * The run's workflows (`src/workflow/`) over fake ports: no Durable Object, no storage, no shard.
 * The run's state is a few maps, the tenant's effect shards a function, and each test reads what
 * the workflow asked of its ports; tools, keys and requests are the product's own (the real
 * catalog, the real key derivation and intake).
 */

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const REFUND = catalog.find("support", "issue_refund");
if (!REFUND) throw new Error("the demo catalog has no issue_refund");
const TOOL = REFUND;

const TENANT_SETTINGS = {
  namespaces: ["support"],
  ceilings: DEFAULT_LIMITS,
  max_refund_cents: 50_000,
  owns: { order_id: "^A\\d{4}$" },
};
const TENANT = tenantConfigSchema().parse(TENANT_SETTINGS);
// Intake reads the whole configuration: the upstream and audit signing key is one made for this file.
const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
const SIGNING_KEY = { ...(await exportJWK(privateKey)), kid: "unit-workflow", alg: "EdDSA" };
const ENV = {
  ENVIRONMENT: "sandbox",
  OPERATOR_KEYS: "{}",
  TENANT_KEYS: "{}",
  RUN_TOKEN_KEYS: JSON.stringify(["run-token-key-for-unit-tests"]),
  UPSTREAM_SIGNING_KEYS: JSON.stringify([SIGNING_KEY]),
  AUDIT_SIGNING_KEYS: JSON.stringify([SIGNING_KEY]),
  TENANTS: { acme: TENANT_SETTINGS },
} as unknown as Env;

async function openRun(): Promise<RunMeta> {
  return openAcmeRun({ run_id: "run_workflow", catalog_version: await catalog.version(), t0: T0 });
}

const refundArgs = (amount: number) => ({ order_id: "A1004", amount_cents: amount, reason: "user_cancel" });
const keyOf = (run: RunMeta, args: Record<string, unknown>) =>
  deriveIdempotencyKey({ tenant: "acme", runId: run.run_id, tool: TOOL.name, args });

type Claim = Parameters<RunPorts["tenantWide"]["claim"]>;

/** A run's state in maps, and a record of everything the workflow asked of its ports. */
function fakePorts(run: RunMeta, shards: (...claim: Claim) => Promise<TenantCheck>) {
  const records = new Map<string, CallRecord>();
  const approvals = new Map<string, ApprovalRecord>();
  const inflight = new Set<string>();
  const deciding = new Map<string, number>();
  const asked = { claims: [] as Claim[], commits: [] as Write[][], reconciled: [] as string[] };
  const unused = () => {
    throw new Error("not expected of this workflow");
  };
  const ports: RunPorts = {
    env: ENV,
    now: () => T0 + 1_000,
    reads: {
      run: () => run,
      key: (key) => records.get(key) ?? null,
      approval: (id) => approvals.get(id) ?? null,
      approvalOfKey: (key) => [...approvals.values()].find((a) => a.idempotency_key === key) ?? null,
      approvalOfAskedKey: () => null,
      pending: () => [...approvals.values()].filter((a) => a.state === "pending"),
      discoveryUsed: () => 0,
      callView: unused,
      decisionView: unused,
      settlementView: unused,
      interruptedView: unused,
    },
    commit: (event) => {
      const result = event();
      asked.commits.push(result.writes);
      return { result, changed: [] };
    },
    deferredReads: { hold: unused, release: unused },
    outbox: {
      publish: async () => {},
      learnCall: () => {},
      deliverOwed: async () => {},
      owesAudit: () => false,
    },
    inflight: {
      has: (key) => key !== null && inflight.has(key),
      mark: unused,
      join: unused,
      done: (key) => {
        if (key !== null) inflight.delete(key);
      },
    },
    deciding: {
      has: (key) => deciding.has(key),
      hold: (key) => deciding.set(key, (deciding.get(key) ?? 0) + 1),
      release: (key) => {
        const left = (deciding.get(key) ?? 0) - 1;
        if (left > 0) deciding.set(key, left);
        else deciding.delete(key);
      },
    },
    alarm: { schedule: async () => {} },
    tenantWide: {
      claim: (...claim) => {
        asked.claims.push(claim);
        return shards(...claim);
      },
      reconcile: async (_tenant, _shards, key) => {
        asked.reconciled.push(key);
      },
    },
    rate: { take: async () => null, released: async () => {} },
    waiters: { wait: async () => false },
    keeping: { results: { forget: () => {} } } as unknown as RunPorts["keeping"],
    metrics: { highRisk: () => {} },
    sessionActive: () => true,
    createPending: unused,
  };
  return { ports, records, approvals, inflight, deciding, asked };
}

const fits = async (...[, , claim]: Claim): Promise<TenantCheck> =>
  ({ claim, shards: [0], verdict: { kind: "fits" } }) as unknown as TenantCheck;
const unreachable = async (): Promise<TenantCheck> => {
  throw new Error("effect shards out of reach");
};

/** The effect of a refund this run asks for the first time: no earlier claim to replace. */
function newEffect(
  run: Parameters<typeof claimTenantWide>[1]["run"],
  key: string,
  args: Record<string, unknown>,
) {
  return { run, tool: TOOL, tenant: TENANT, key, args, trace_args: args, now: T0, replaces: null };
}

describe("the tenant-wide claim of a new effect", () => {
  it("claims a new refund once, holding its key as deciding until the caller releases it", async () => {
    const run = await openRun();
    const { ports, deciding, asked } = fakePorts(run, fits);
    const args = refundArgs(1_500);
    const key = await keyOf(run, args);
    const step = await claimTenantWide(ports, newEffect(run, key, args));
    expect(step.kind).toBe("claimed");
    expect(asked.claims).toHaveLength(1);
    expect(asked.claims[0]?.[2]).toMatchObject({ key, run_id: run.run_id });
    expect(asked.claims[0]?.[3]).toBeNull();
    expect(deciding.has(key)).toBe(true);
  });

  it("asks no shard for a key this run has recorded or has in flight: it is no new effect", async () => {
    const run = await openRun();
    const { ports, records, inflight, asked } = fakePorts(run, fits);
    const args = refundArgs(1_500);
    const key = await keyOf(run, args);
    const effect = newEffect(run, key, args);
    inflight.add(key);
    expect(await claimTenantWide(ports, effect)).toEqual({ kind: "none" });
    inflight.delete(key);
    const request = buildRequest(TOOL, args, { key, callId: "call_first" });
    records.set(key, {
      key,
      tool: TOOL.name,
      side_effect: TOOL.side_effect,
      state: "held",
      request,
      envelope: null,
      sends: 0,
    });
    expect(await claimTenantWide(ports, effect)).toEqual({ kind: "none" });
    expect(asked.claims).toEqual([]);
  });

  it("reports shards out of reach and leaves the key not deciding, so nothing may be reserved", async () => {
    const run = await openRun();
    const { ports, deciding } = fakePorts(run, unreachable);
    const args = refundArgs(1_500);
    const key = await keyOf(run, args);
    const step = await claimTenantWide(ports, newEffect(run, key, args));
    expect(step).toEqual({ kind: "unreachable" });
    expect(deciding.has(key)).toBe(false);
  });
});

describe("an operator's approve with edit", () => {
  async function pendingRefund(ports: ReturnType<typeof fakePorts>, run: RunMeta, amount: number) {
    const args = refundArgs(amount);
    const key = await keyOf(run, args);
    const approval = pendingApproval({
      tool: TOOL,
      run_id: run.run_id,
      key,
      args,
      digest: `digest-${amount}`,
      policy: "pol_current",
      requirement: approverRequirement(TOOL, args, TENANT),
      t0: T0,
    });
    ports.approvals.set(approval.id, approval);
    return approval;
  }
  const decision = (approval: ApprovalRecord, amount: number): DecideInput => ({
    tenant: "acme",
    approval_id: approval.id,
    decision: "approve",
    operator: "operator:aaaaaaaaaaaa",
    operator_name: "Ann Lee",
    operator_roles: approval.approver_roles,
    reason: null,
    args: refundArgs(amount),
  });

  it("claims the edited call tenant-wide, replacing the claim of the call as asked", async () => {
    const run = await openRun();
    const fake = fakePorts(run, fits);
    const approval = await pendingRefund(fake, run, 1_500);
    const edit = await editOf(fake.ports, run, decision(approval, 1_200), approval);
    const editedKey = await keyOf(run, refundArgs(1_200));
    expect(edit).toMatchObject({ kind: "ready", view: { key: editedKey } });
    expect(edit.kind === "ready" && edit.view?.check).toBeTruthy();
    expect(fake.asked.claims).toHaveLength(1);
    expect(fake.asked.claims[0]?.[3]).toBe(approval.idempotency_key);
    expect(fake.deciding.has(editedKey)).toBe(true);
  });

  it("is refused, committing nothing, when the tenant's effect shards cannot be reached", async () => {
    const run = await openRun();
    const fake = fakePorts(run, unreachable);
    const approval = await pendingRefund(fake, run, 1_500);
    const edit = await editOf(fake.ports, run, decision(approval, 1_200), approval);
    expect(edit).toMatchObject({ kind: "refused", result: { ok: false, code: "conflict_error", approval } });
    expect(fake.asked.commits).toEqual([]);
    expect(fake.deciding.has(await keyOf(run, refundArgs(1_200)))).toBe(false);
  });

  it("refuses edited arguments the tool's policy refuses, asking no shard", async () => {
    const run = await openRun();
    const fake = fakePorts(run, fits);
    const approval = await pendingRefund(fake, run, 1_500);
    const edit = await editOf(fake.ports, run, decision(approval, 90_000), approval);
    expect(edit).toMatchObject({ kind: "refused", result: { ok: false, code: "edit_refused" } });
    expect(fake.asked.claims).toEqual([]);
  });
});

describe("a call the run's rate refused", () => {
  const RATE = {
    code: "rate_limited",
    message: "The run's call rate is spent.",
    retry_after_ms: 500,
  } as const;
  const input = (args: Record<string, unknown>, tool = "issue_refund"): CallInput =>
    ({
      tenant: "acme",
      run_id: "run_workflow",
      call_id: "call_refused",
      request: { ok: true, tool, args },
      intent: null,
    }) as unknown as CallInput;

  it("says nothing was done for a call with no earlier send", async () => {
    const run = await openRun();
    const { ports } = fakePorts(run, fits);
    const envelope = await rateRefusal(ports, run, input(refundArgs(1_500)), RATE);
    expect(envelope.error).toMatchObject({ code: "rate_limited" });
    expect(envelope.error?.side_effect_confirmed).toBe(false);
  });

  it("reports the stored outcome of a resend whose key completed, never 'not done'", async () => {
    const run = await openRun();
    const { ports, records } = fakePorts(run, fits);
    const args = refundArgs(1_500);
    const key = await keyOf(run, args);
    const request = buildRequest(TOOL, args, { key, callId: "call_first" });
    const done = success(
      { call_id: "call_first", environment: "sandbox", tool: TOOL.name, idempotency_key: key },
      { refund_id: "rf_1" },
    );
    records.set(key, {
      key,
      tool: TOOL.name,
      side_effect: TOOL.side_effect,
      state: "completed",
      request,
      envelope: done,
      sends: 1,
    });
    const envelope = await rateRefusal(ports, run, input(args), RATE);
    expect(envelope.error).toMatchObject({ code: "rate_limited" });
    expect(envelope.idempotency_key).toBe(key);
    expect(envelope.error?.side_effect_confirmed).toBe(true);
  });

  it("leaves the effect unknown while the key's send is in flight", async () => {
    const run = await openRun();
    const { ports, inflight } = fakePorts(run, fits);
    const args = refundArgs(1_500);
    inflight.add(await keyOf(run, args));
    const envelope = await rateRefusal(ports, run, input(args), RATE);
    expect(envelope.error?.side_effect_confirmed).toBeNull();
  });
});
