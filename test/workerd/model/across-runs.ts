import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { ToolSpec } from "../../../src/catalog/define-tool";
import { parseTenants, type TenantConfig } from "../../../src/config/tenants";
import { sha256Hex } from "../../../src/core/digest";
import { utcDay } from "../../../src/effects/claim";
import { claimTenantWide, reportEffect } from "../../../src/ledger/effects-client";
import type { RunLedger } from "../../../src/ledger/run-ledger";
import { catalog } from "../../../src/tools";
import { sandbox } from "../helpers";
import { argsSigOf, type TenantName, type ToolName } from "./reference";
import type { RefundRow } from "./system";
import { violated } from "./violation";

/**
 * The guarantees past one run (rules 9 and 10), checked against the sandbox's own records of every
 * run of a tenant, this sequence's and every earlier one's:
 *
 * 9. No silent duplicate across runs: of the effects on one identity (tenant, tool, identity
 *    arguments) within the tool's window, those of at most one run went ahead without an operator
 *    who approved them as a confirmed duplicate (an approval that listed the earlier effect), unless
 *    the tenant lets the tool repeat.
 * 10. Caps are reserved, not checked: the refunds no operator approved never add up to more than
 *    the tenant's daily cap (with what its other runs already moved today), a subject's daily cap or,
 *    within one run, the per-run cap.
 *
 * Whether an operator approved an effect is read from its run's ledger: an approved (or executed)
 * approval of the same call. Effects carry no key, so they are matched by arguments and counted:
 * with a approvals of a call and n effects of it in one run, n - a went ahead on their own.
 */

/**
 * What names the business thing each write changes, as a platform team would: a refund's order; a
 * ticket's customer and summary, not its priority (the same ticket raised to urgent is no new one).
 * The catalog must declare the same (`effect.identity`), checked before the sandbox's records are.
 */
const IDENTITY_FIELDS = {
  issue_refund: ["order_id"],
  create_internal_ticket: ["customer_id", "summary"],
} as const satisfies Partial<Record<ToolName, readonly string[]>>;

type EffectTool = keyof typeof IDENTITY_FIELDS;

/** The identity's fields with their values, as a report names them: `customer_id "C201" and summary "…"`. */
function identityOf(tool: EffectTool, args: Record<string, unknown>): string {
  return IDENTITY_FIELDS[tool].map((field) => `${field} ${JSON.stringify(args[field])}`).join(" and ");
}

let identitiesAgreed = false;

/** The model's identities are the catalog's: a disagreement is named here, not found by a long soak. */
function checkIdentitiesAgree(): void {
  if (identitiesAgreed) return;
  for (const [tool, fields] of Object.entries(IDENTITY_FIELDS)) {
    const declared = (catalog.find("support", tool) as ToolSpec).effect?.fields ?? null;
    if (JSON.stringify(declared) !== JSON.stringify(fields)) {
      throw new Error(
        `the model identifies ${tool}'s effect by [${fields.join(", ")}], the catalog by ${declared ? `[${declared.join(", ")}]` : "its whole arguments"}`,
      );
    }
  }
  identitiesAgreed = true;
}

/** The sequence's name of each run it opened, so a report says which runs it means. */
const runNames = new Map<string, string>();

export function nameRun(runId: string, name: string, sequence: number): void {
  runNames.set(runId, `sequence ${sequence}'s ${name}`);
}

const runLabel = (runId: string) => `${runId} (${runNames.get(runId) ?? "no sequence's run"})`;

/** How an effect came to be: on its own, approved by an operator, or approved as a confirmed duplicate. */
type Sanction = "none" | "operator" | "confirmed_duplicate";

interface UpstreamEffect {
  id: string;
  tool: EffectTool;
  run_id: string;
  argsSig: string;
  /** The identity's fields and values (for a refund, its order only: the per-order cap's subject too). */
  identity: string;
  amount: number;
  created_at: string;
}

interface Approved {
  /** Approved calls by arguments: how many were approved, and how many of them as confirmed duplicates. */
  byCall: Map<string, { operator: number; confirmed_duplicate: number }>;
  /** How many effects of the run this was read for: read again once the run holds more. */
  effects: number;
}

/**
 * The violations already reported, by what they are about. The sandbox keeps every sequence's
 * effects, so a violation stays in its records: reported once, it does not fail every later
 * sequence too, and fast-check's shrinking finds only sequences that break the rule themselves.
 */
const reported = new Set<string>();

function violatedOnce(about: string, rule: string, message: string, evidence?: unknown): void {
  if (reported.has(about)) return;
  reported.add(about);
  violated(rule, message, evidence);
}

/** The approvals each run's ledger holds as approved, kept while its effects stay the same. */
const approvedOf = new Map<string, Approved>();

interface TicketRow {
  ticket_id: string;
  customer_id: string;
  priority: string;
  summary: string;
  run_id: string | null;
  created_at: string;
}

async function upstreamEffectsOf(tenant: TenantName): Promise<UpstreamEffect[]> {
  const [{ refunds }, { tickets }] = await Promise.all([
    sandbox<{ refunds: RefundRow[] }>(`/_admin/refunds?tenant=${tenant}`),
    sandbox<{ tickets: TicketRow[] }>(`/_admin/tickets?tenant=${tenant}`),
  ]);
  const effects: UpstreamEffect[] = [];
  for (const row of refunds) {
    if (row.run_id === null) continue;
    const { order_id, amount_cents, reason } = row;
    effects.push({
      id: row.refund_id,
      tool: "issue_refund",
      run_id: row.run_id,
      argsSig: argsSigOf("issue_refund", { order_id, amount_cents, reason }),
      identity: identityOf("issue_refund", { order_id }),
      amount: amount_cents,
      created_at: row.created_at,
    });
  }
  for (const row of tickets) {
    if (row.run_id === null) continue;
    const { customer_id, priority, summary } = row;
    effects.push({
      id: row.ticket_id,
      tool: "create_internal_ticket",
      run_id: row.run_id,
      argsSig: argsSigOf("create_internal_ticket", { customer_id, priority, summary }),
      identity: identityOf("create_internal_ticket", { customer_id, summary }),
      amount: 0,
      created_at: row.created_at,
    });
  }
  return effects;
}

async function readApproved(tenant: TenantName, runId: string, effects: number): Promise<Approved> {
  const stub = env.RUN_LEDGER.get(
    env.RUN_LEDGER.idFromName(`${tenant}/${runId}`),
  ) as DurableObjectStub<RunLedger>;
  const rows = await runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ tool: string; args: string; cross_run: string | null }>(
        "SELECT tool, args, cross_run FROM approvals WHERE state IN ('approved', 'executed')",
      )
      .toArray(),
  );
  const byCall = new Map<string, { operator: number; confirmed_duplicate: number }>();
  for (const row of rows) {
    const sig = argsSigOf(row.tool as ToolName, JSON.parse(row.args) as Record<string, unknown>);
    const counts = byCall.get(sig) ?? { operator: 0, confirmed_duplicate: 0 };
    const earlier = row.cross_run
      ? (JSON.parse(row.cross_run) as { earlier_effects?: unknown[] }).earlier_effects
      : undefined;
    if ((earlier?.length ?? 0) > 0) counts.confirmed_duplicate++;
    else counts.operator++;
    byCall.set(sig, counts);
  }
  return { byCall, effects };
}

/** Each effect with how it came to be, its run's approvals read again whenever the run holds more effects. */
async function sanctioned(tenant: TenantName, effects: readonly UpstreamEffect[]) {
  const perRun = new Map<string, UpstreamEffect[]>();
  for (const effect of effects) perRun.set(effect.run_id, [...(perRun.get(effect.run_id) ?? []), effect]);
  const result: Array<UpstreamEffect & { sanction: Sanction }> = [];
  for (const [runId, rows] of perRun) {
    let approved = approvedOf.get(runId);
    if (!approved || approved.effects !== rows.length) {
      approved = await readApproved(tenant, runId, rows.length);
      approvedOf.set(runId, approved);
    }
    const used = new Map<string, { operator: number; confirmed_duplicate: number }>();
    for (const row of rows) {
      const have = approved.byCall.get(row.argsSig) ?? { operator: 0, confirmed_duplicate: 0 };
      const taken = used.get(row.argsSig) ?? { operator: 0, confirmed_duplicate: 0 };
      let sanction: Sanction = "none";
      if (taken.confirmed_duplicate < have.confirmed_duplicate) {
        taken.confirmed_duplicate++;
        sanction = "confirmed_duplicate";
      } else if (taken.operator < have.operator) {
        taken.operator++;
        sanction = "operator";
      }
      used.set(row.argsSig, taken);
      result.push({ ...row, sanction });
    }
  }
  return result;
}

function tenantConfig(tenant: TenantName): TenantConfig {
  const config = parseTenants(env.TENANTS)[tenant];
  if (!config) throw new Error(`no tenant ${tenant} in TENANTS`);
  return config;
}

const windowOf = (tool: ToolName) =>
  (catalog.find("support", tool) as ToolSpec).effect?.window_ms ?? 24 * 60 * 60 * 1000;

/** Rules 9 and 10 for each tenant, over everything the sandbox holds of its runs. */
export async function checkAcrossRuns(tenants: Iterable<TenantName>): Promise<void> {
  checkIdentitiesAgree();
  for (const tenant of new Set(tenants)) {
    const effects = await sanctioned(tenant, await upstreamEffectsOf(tenant));
    const config = tenantConfig(tenant);
    checkNoSilentDuplicate(tenant, config, effects);
    checkCapsHeld(tenant, config, effects);
  }
}

function checkNoSilentDuplicate(
  tenant: TenantName,
  config: TenantConfig,
  effects: ReadonlyArray<UpstreamEffect & { sanction: Sanction }>,
): void {
  const repeatable = config.repeat_effects.support ?? [];
  const unconfirmed = effects.filter(
    (effect) => effect.sanction !== "confirmed_duplicate" && !repeatable.includes(effect.tool),
  );
  for (const [n, effect] of unconfirmed.entries()) {
    const window = windowOf(effect.tool);
    const other = unconfirmed
      .slice(n + 1)
      .find(
        (later) =>
          later.tool === effect.tool &&
          later.identity === effect.identity &&
          later.run_id !== effect.run_id &&
          Math.abs(Date.parse(later.created_at) - Date.parse(effect.created_at)) < window,
      );
    if (other) {
      violatedOnce(
        `duplicate ${effect.id} ${other.id}`,
        "9",
        `${tenant}'s runs ${runLabel(effect.run_id)} and ${runLabel(other.run_id)} both made ${effect.tool} on ${effect.identity} within its window, and no operator confirmed the second as a duplicate`,
        [effect, other],
      );
    }
  }
}

function checkCapsHeld(
  tenant: TenantName,
  config: TenantConfig,
  effects: ReadonlyArray<UpstreamEffect & { sanction: Sanction }>,
): void {
  const caps = config.value_caps.USD;
  if (!caps) return;
  const auto = effects.filter((effect) => effect.tool === "issue_refund" && effect.sanction === "none");
  const sums = (keyOf: (effect: UpstreamEffect) => string) => {
    const totals = new Map<string, number>();
    for (const effect of auto) totals.set(keyOf(effect), (totals.get(keyOf(effect)) ?? 0) + effect.amount);
    return totals;
  };
  const dayOf = (effect: UpstreamEffect) => utcDay(Date.parse(effect.created_at));
  if (caps.per_day !== undefined) {
    for (const [day, total] of sums(dayOf)) {
      const elsewhere = tenant === FLEET_TENANT ? (spentElsewhere.get(day) ?? 0) : 0;
      if (total + elsewhere > caps.per_day) {
        violatedOnce(
          `${tenant} per_day ${day}`,
          "10",
          `${tenant}'s refunds no operator approved on ${day} move ${total} (and ${elsewhere} moved elsewhere), over the daily cap ${caps.per_day}`,
          auto.filter((e) => dayOf(e) === day),
        );
      }
    }
  }
  if (caps.per_subject_day !== undefined) {
    for (const [subject, total] of sums((effect) => `${dayOf(effect)} ${effect.identity}`)) {
      if (total > caps.per_subject_day) {
        violatedOnce(
          `${tenant} per_subject_day ${subject}`,
          "10",
          `${tenant}'s refunds no operator approved for ${subject} move ${total}, over the per-subject cap ${caps.per_subject_day}`,
        );
      }
    }
  }
  if (caps.per_run !== undefined) {
    for (const [run, total] of sums((effect) => effect.run_id)) {
      if (total > caps.per_run) {
        violatedOnce(
          `${tenant} per_run ${run}`,
          "10",
          `the refunds no operator approved in ${tenant} run ${run} move ${total}, over the per-run cap ${caps.per_run}`,
          auto.filter((e) => e.run_id === run),
        );
      }
    }
  }
}

/** The tenant whose runs a sequence multiplies, and the orders each sequence refunds. */
export const FLEET_TENANT = "hooli";
const FLEET_FIRST_ORDER = 40;
const FLEET_ORDERS = 150;

/** Three hooli orders of the sequence's own (H0040–H0189), so that no earlier sequence refunded them. */
export function fleetOrdersFor(sequence: number): string[] {
  return [0, 1, 2].map(
    (n) => `H${String(FLEET_FIRST_ORDER + ((sequence * 3 + n) % FLEET_ORDERS)).padStart(4, "0")}`,
  );
}

/** What other hooli runs moved today, by day, as the shards were told it before any sequence. */
const spentElsewhere = new Map<string, number>();

/**
 * Other runs of hooli already moved `amount` today (confirmed refunds on orders no sequence uses),
 * so that a sequence of a few refunds reaches the daily cap. Claimed through the tenant's shards, as
 * a run's ledger claims, and reported confirmed, as its outbox would. Once a day.
 */
export async function spendFleetDayElsewhere(amount: number): Promise<void> {
  const now = Date.now();
  const day = utcDay(now);
  if (amount <= 0 || spentElsewhere.has(day)) return;
  spentElsewhere.set(day, 0);
  const config = tenantConfig(FLEET_TENANT);
  const part = Math.min(config.value_caps.USD?.per_subject_day ?? amount, 2_000);
  for (let n = 0; n * part < amount; n++) {
    const share = Math.min(part, amount - n * part);
    const order_id = `H${String(300 + n).padStart(4, "0")}`;
    const key = `elsewhere-${day}-${n}`;
    const identity = { order_id };
    const check = await claimTenantWide(env, FLEET_TENANT, config, {
      key,
      run_id: `run_elsewhere_${day}`,
      tool: "support.issue_refund",
      identity,
      identity_digest: await sha256Hex(JSON.stringify({ tool: "support.issue_refund", identity })),
      window_ms: windowOf("issue_refund"),
      args: { order_id, amount_cents: share, reason: "user_cancel" },
      at: now,
      day,
      value: { amount: share, currency: "USD", subject: order_id, subject_in_identity: true },
      repeatable: false,
    });
    if (check.over)
      throw new Error(`the day's cap could not hold what was moved elsewhere: ${JSON.stringify(check.over)}`);
    await reportEffect(env, FLEET_TENANT, check.shards, {
      key,
      fate: "confirmed",
      external_id: null,
      override: false,
    });
    spentElsewhere.set(day, (spentElsewhere.get(day) ?? 0) + share);
  }
}
