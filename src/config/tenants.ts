import * as z from "zod";
import { RunToolsSubsetSchema } from "../wire/requests";
import { type RunLimits, RunLimitsSchema } from "../wire/run-status";
import { AlertsSchema } from "./alerts";
import { ApprovalEscalationSettings } from "./approval-escalation";
import { ApproversSchema } from "./approver-settings";
import { RateLimitSettingsSchema } from "./rate-settings";
import { ResidencySchema } from "./residency";
import { ToolLimitsSchema, toolLimitNamespaceIssues } from "./tool-limits";

export const DEFAULT_LIMITS: RunLimits = {
  max_calls: 20,
  max_writes: 5,
  max_destructive: 1,
  deadline_s: 120,
};

/** What a run opened with an agent key of this profile gets; see src/auth/agent-keys.ts. */
export const AgentProfileSchema = z.strictObject({
  namespace: z.string().describe("The namespace whose tools runs opened with this profile may use."),
  limits: RunLimitsSchema.partial().default({}).describe("The run limits, within the tenant's ceilings."),
  tools: RunToolsSubsetSchema.optional().describe(
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
export const ValueCapsSchema = z.strictObject({
  /** What one run may move. */
  per_run: wholeNumber(0).optional(),
  /** What the tenant's runs together may move in one UTC day. */
  per_day: wholeNumber(0).optional(),
  /** What may be moved for one subject (the tool's declared `value.subject`) in one UTC day. */
  per_subject_day: wholeNumber(0).optional(),
});

/** What a tainted run's write or destructive call gets. */
export const TaintedRunActionSchema = z.enum(["require_approval", "refuse"]);

export const TenantConfigSchema = z.strictObject({
  /** Namespaces whose tools this tenant's runs may open. */
  namespaces: z.array(z.string()).min(1),
  ceilings: RunLimitsSchema,
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
  rate_limits: RateLimitSettingsSchema.prefault({}),
  /** Calls per window of single tools across the tenant's runs, per subject if asked; see tool-limits.ts. */
  tool_limits: ToolLimitsSchema,
  /** Where the tenant's Durable Objects live (a jurisdiction, a location hint); see residency.ts. */
  residency: ResidencySchema,
  /**
   * What happens to a side effect once the run has read third-party text (it is tainted):
   * `require_approval` makes the call wait for a human, `refuse` refuses it outright as a
   * `permission_error` naming the tainting call. Both default to `require_approval`.
   */
  tainted_runs: z
    .strictObject({
      write: TaintedRunActionSchema.default("require_approval"),
      destructive: TaintedRunActionSchema.default("require_approval"),
    })
    .prefault({}),
  /** Value caps per currency (ISO 4217 code → caps); see `ValueCapsSchema`. */
  value_caps: z
    .record(z.string().regex(/^[A-Z]{3}$/), ValueCapsSchema, {
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
  agent_profiles: z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/), AgentProfileSchema).default({}),
  /** Thresholds on the health page's rates over a window: rate name → alert (see config/alerts.ts). */
  alerts: AlertsSchema.default({}),
  ...ApprovalEscalationSettings,
  /** Roles above amounts and the two-person rule, per tool: see `ApproversSchema`. */
  approvers: ApproversSchema,
});
export type TenantConfig = z.infer<typeof TenantConfigSchema>;

/** An agent profile must stay inside its tenant: one of its namespaces, limits under its ceilings. */
const TenantWithProfilesSchema = TenantConfigSchema.superRefine((tenant, ctx) => {
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
});

export const TenantsSchema = z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/), TenantWithProfilesSchema, {
  error: (issue) =>
    issue.code === "invalid_key"
      ? `${JSON.stringify(issue.input)} is not a tenant id: lowercase letters, digits, _ and -`
      : undefined,
});
export type Tenants = z.infer<typeof TenantsSchema>;

/** `globex.value_caps.USD.per_day`, `acme.namespaces[1]`: where an issue lies in `TENANTS`. */
function tenantsPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) =>
      typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${String(part)}`,
    )
    .join("");
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
  const parsed = TenantsSchema.safeParse(value);
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
