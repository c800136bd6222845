import * as z from "zod";
import { canonicalJson } from "../core/canonical-json";
import { lazily } from "../core/lazily";
import { compiledTenants } from "../generated/tenants";
import { runToolsSubsetSchema } from "../wire/requests";
import { type RunLimits, runLimitsSchema } from "../wire/run-status";
import { alertsSchema } from "./alerts";
import { approvalEscalationSettings } from "./approval-escalation";
import { approversSchema } from "./approver-settings";
import { auditSettingsSchema } from "./audit";
import { rateLimitSettingsSchema } from "./rate-settings";
import { residencySchema } from "./residency";
import { toolLimitNamespaceIssues, toolLimitsSchema } from "./tool-limits";
import { userIdentitySchema } from "./user-identity";

export const DEFAULT_LIMITS: RunLimits = {
  max_calls: 20,
  max_writes: 5,
  max_destructive: 1,
  deadline_s: 120,
};

/** What a run opened with an agent key of this profile gets; see src/auth/agent-keys.ts. */
const agentProfileSchema = () =>
  z.strictObject({
    namespace: z.string().describe("The namespace whose tools runs opened with this profile may use."),
    limits: runLimitsSchema().partial().default({}).describe("The run limits, within the tenant's ceilings."),
    tools: runToolsSubsetSchema()
      .optional()
      .describe(
        "The tools its runs open with (names, or namespace.tool), all granted to the tenant; its whole namespace when left out.",
      ),
  });

/**
 * A whole number in a range, refused with the range and the value given: "must be an integer ≥ 0
 * (got -5)", so a deploy error in wrangler.toml names what to write.
 */
function wholeNumber(min: number, max?: number) {
  const range = max === undefined ? `≥ ${min}` : `from ${min} to ${max}`;
  const error = (issue: { input?: unknown }) =>
    `must be an integer ${range} (got ${JSON.stringify(issue.input) ?? "nothing"})`;
  const schema = z.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? schema : schema.max(max, { error });
}

/**
 * A tenant's caps on the value its agents' effects move, in one currency's minor unit. Each is
 * optional: a cap left out does not apply. Value is reserved before a request leaves, so reserved
 * value never exceeds a cap; a call that would exceed one waits for a human.
 */
const valueCapsSchema = () =>
  z.strictObject({
    /** What one run may move. */
    per_run: wholeNumber(0).optional(),
    /** What the tenant's runs together may move in one UTC day. */
    per_day: wholeNumber(0).optional(),
    /** What may be moved for one subject (the tool's declared `value.subject`) in one UTC day. */
    per_subject_day: wholeNumber(0).optional(),
  });

/** What a tainted run's write or destructive call gets. */
const TAINTED_RUN_ACTIONS = ["require_approval", "refuse"] as const;

/**
 * One tenant's settings. Built on first use, with every schema it is made of: the `TENANTS` a
 * deploy ships was parsed with it when the catalog was compiled (`npm run tools -- compile`), so an
 * isolate serving that deploy never builds it (`parseTenants`).
 */
export const tenantConfigSchema = lazily(() =>
  z.strictObject({
    /** Namespaces whose tools this tenant's runs may open. */
    namespaces: z.array(z.string()).min(1),
    ceilings: runLimitsSchema(),
    /** The nth identical call in a run is refused as a repeat. */
    repeat_threshold: wholeNumber(2, 1_000).default(3),
    /** Largest single refund an agent may issue, in cents. */
    max_refund_cents: wholeNumber(0),
    /** Refunds up to this amount run without a human approval; 0 means every refund waits for one. */
    auto_approve_refund_cents: wholeNumber(0).default(0),
    /** Pending approvals a run may hold at once; a model that keeps asking is stopped here. */
    max_open_approvals: wholeNumber(1, 100).default(3),
    /**
     * Thresholds of declared tools' policies (catalog/*.yaml), per namespace: namespace → setting →
     * number. A policy reads `settings[namespace][name]` first, then the tenant's own field `name`.
     */
    settings: z.record(z.string(), z.record(z.string(), z.number())).default({}),
    /** Which resource ids belong to the tenant: argument name → anchored regular expression. */
    owns: z.record(z.string(), z.string()).default({}),
    /** Requests per window at the edge; every setting left out takes its default. */
    rate_limits: rateLimitSettingsSchema().prefault({}),
    /** Calls per window of single tools across the tenant's runs, per subject if asked; see tool-limits.ts. */
    tool_limits: toolLimitsSchema(),
    /** Where the tenant's Durable Objects live (a jurisdiction, a location hint); see residency.ts. */
    residency: residencySchema(),
    /**
     * What happens to a side effect once the run has read third-party text (it is tainted):
     * `require_approval` makes the call wait for a human, `refuse` refuses it outright as a
     * `permission_error` naming the tainting call. Both default to `require_approval`.
     */
    tainted_runs: z
      .strictObject({
        write: z.enum(TAINTED_RUN_ACTIONS).default("require_approval"),
        destructive: z.enum(TAINTED_RUN_ACTIONS).default("require_approval"),
      })
      .prefault({}),
    /** Value caps per currency (ISO 4217 code → caps); see `valueCapsSchema`. */
    value_caps: z
      .record(z.string().regex(/^[A-Z]{3}$/), valueCapsSchema(), {
        error: (issue) =>
          issue.code === "invalid_key"
            ? `${JSON.stringify(issue.input)} is not a currency: a three-letter ISO 4217 code, such as USD`
            : undefined,
      })
      .default({}),
    /**
     * Tools whose effect may repeat across runs without a human (notes on a ticket): namespace →
     * tool names. Every other write or destructive call on an identity another run already acted on
     * within the tool's window waits for a human.
     */
    repeat_effects: z.record(z.string(), z.array(z.string())).default({}),
    /**
     * How many Durable Objects hold the tenant's effects and value reservations. More shards carry
     * more effectful calls a second; a daily cap is leased to them in parts (see docs/guarantees.md, "Value caps").
     */
    effect_shards: wholeNumber(1, 64).default(4),
    /** What a run opened with one of the tenant's agent keys gets: profile name → namespace and limits. */
    agent_profiles: z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/), agentProfileSchema()).default({}),
    /** Thresholds on the health page's rates over a window: rate name → alert (see config/alerts.ts). */
    alerts: alertsSchema().default({}),
    ...approvalEscalationSettings(),
    /** Roles above amounts and the two-person rule, per tool: see `approversSchema`. */
    approvers: approversSchema(),
    /** The identity provider whose assertions name a run's user; absent: runs name none. */
    users: userIdentitySchema().optional(),
    /** The audit log's retention and push: see `auditSettingsSchema`. */
    audit: auditSettingsSchema(),
  }),
);
export type TenantConfig = z.infer<ReturnType<typeof tenantConfigSchema>>;

/** An agent profile must stay inside its tenant: one of its namespaces, limits under its ceilings. */
function profileIssues(tenant: TenantConfig, ctx: z.RefinementCtx): void {
  for (const issue of toolLimitNamespaceIssues(tenant)) ctx.addIssue({ code: "custom", ...issue });
  for (const [name, profile] of Object.entries(tenant.agent_profiles)) {
    if (!tenant.namespaces.includes(profile.namespace)) {
      ctx.addIssue({
        code: "custom",
        path: ["agent_profiles", name, "namespace"],
        message: `"${profile.namespace}" is not one of the tenant's namespaces`,
      });
    }
    for (const [field, value] of Object.entries(profile.limits) as [keyof RunLimits, number][]) {
      if (value > tenant.ceilings[field]) {
        ctx.addIssue({
          code: "custom",
          path: ["agent_profiles", name, "limits", field],
          message: `${value} is above the tenant's ceiling of ${tenant.ceilings[field]}`,
        });
      }
    }
  }
}

/** The whole `TENANTS` var: tenant id → settings. Built on first use, as `tenantConfigSchema`. */
export const tenantsSchema = lazily(() =>
  z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/), tenantConfigSchema().superRefine(profileIssues), {
    error: (issue) =>
      issue.code === "invalid_key"
        ? `${JSON.stringify(issue.input)} is not a tenant id: lowercase letters, digits, _ and -`
        : undefined,
  }),
);
export type Tenants = z.infer<ReturnType<typeof tenantsSchema>>;

/** `globex.value_caps.USD.per_day`, `acme.namespaces[1]`: where an issue lies in `TENANTS`. */
function tenantsPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) =>
      typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${String(part)}`,
    )
    .join("");
}

/** One environment's `TENANTS` and what `tenantsSchema` made of it, written by compile. */
export interface CompiledTenants {
  environment: string;
  /** The table as the Worker is given it, in canonical JSON. */
  input: string;
  tenants: Tenants;
}

/**
 * What compile parsed for a table equal to `value`, or null. The table a deploy ships (wrangler.toml,
 * `npm run tools -- compile`) is parsed once, by the same schema, when it is compiled, so an isolate
 * given it builds none of the schemas above: they are most of what a new isolate would otherwise
 * build, and a Durable Object's isolate builds them before its first answer. Equal means equal in
 * canonical JSON, the form compile stored; a table edited since (a var changed in the dashboard, a
 * wrangler.toml not compiled again) is parsed here, as any other.
 */
function compiledTenantsOf(value: unknown): Tenants | null {
  let input: string;
  try {
    input = canonicalJson(value);
  } catch {
    // A value canonical JSON cannot write (NaN, a function) is not a table compile wrote; the schema says why.
    return null;
  }
  return compiledTenants.find((entry) => entry.input === input)?.tenants ?? null;
}

/**
 * Reads the `TENANTS` var; a malformed one is a deploy error. The error names every problem with
 * its path: `TENANTS is invalid at "globex.value_caps.USD.per_day": must be an integer ≥ 0 (got -5)`.
 */
export function parseTenants(raw: unknown): Tenants {
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new Error(`TENANTS is not JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const compiled = compiledTenantsOf(value);
  if (compiled) return compiled;
  const parsed = tenantsSchema().safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `TENANTS is invalid at "${tenantsPath(issue.path)}": ${issue.message}`,
    );
    throw new Error(problems.join("; "));
  }
  return parsed.data;
}

/**
 * The limits a run gets: the requested ones, else the defaults, each checked against the tenant's
 * ceiling. Asking above a ceiling is an error, not a silent cap, so an orchestrator learns its
 * real budget.
 */
export function resolveRunLimits(
  requested: Partial<RunLimits> | undefined,
  ceilings: RunLimits,
): { ok: true; limits: RunLimits } | { ok: false; field: keyof RunLimits; ceiling: number; asked: number } {
  const limits = { ...DEFAULT_LIMITS };
  for (const field of Object.keys(DEFAULT_LIMITS) as (keyof RunLimits)[]) {
    const asked = requested?.[field];
    if (asked !== undefined) {
      if (asked > ceilings[field]) return { ok: false, field, ceiling: ceilings[field], asked };
      limits[field] = asked;
    } else {
      limits[field] = Math.min(DEFAULT_LIMITS[field], ceilings[field]);
    }
  }
  return { ok: true, limits };
}
