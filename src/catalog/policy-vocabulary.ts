import type { TenantConfig } from "../config/tenants";
import type { PolicyDeclaration } from "./declaration";
import type { PolicyContext, PolicyDecision, ToolPolicy } from "./define-tool";
import { fillText } from "./templates";

/**
 * The business rules a tool can declare without code (catalog/*.yaml `policies`); a code tool uses
 * the same ones through `compilePolicy`. They run after the schema accepted the arguments and
 * refuse with a reason the model can act on. Every threshold comes from the tenant's
 * configuration, never from the model.
 */

type Args = Record<string, unknown>;

/** The id in `field` must belong to the calling tenant (per its `owns` patterns). */
function ownedBy(field: string) {
  return (args: Args, ctx: PolicyContext): PolicyDecision => {
    const value = args[field];
    const pattern = ctx.tenant.owns[field];
    if (typeof value !== "string" || pattern === undefined) return { allow: true };
    if (new RegExp(pattern).test(value)) return { allow: true };
    return {
      allow: false,
      field,
      reason: `${value} does not belong to this tenant`,
      hint: `Use an id from this tenant's own records; ids from other accounts are never reachable.`,
    };
  };
}

/**
 * A tenant's numeric setting for a namespace: `settings[namespace][name]` first, then the tenant's
 * own field of that name (`max_refund_cents`), so per-namespace thresholds need no new schema field.
 */
export function tenantSetting(tenant: TenantConfig, namespace: string, name: string): number | undefined {
  const scoped = tenant.settings[namespace]?.[name];
  if (scoped !== undefined) return scoped;
  const own = (tenant as Record<string, unknown>)[name];
  return typeof own === "number" ? own : undefined;
}

/** A setting the configuration lacks fails closed: the call is refused, naming the setting. */
function unconfigured(field: string, setting: string): PolicyDecision {
  return {
    allow: false,
    field,
    reason: `this tenant has no "${setting}" setting, which this tool's policy needs`,
    hint: "This tool cannot be used until an operator configures the setting; escalate to a human.",
  };
}

/** One declared policy as a function, closed over its namespace for the settings it reads. */
export function compilePolicy(namespace: string, policy: PolicyDeclaration): ToolPolicy<Args> {
  if ("owned_by_tenant" in policy) return ownedBy(policy.owned_by_tenant);
  if ("max_from_setting" in policy) {
    const {
      field,
      setting,
      reason = "{value} is above this tenant's limit for {field}",
      hint = "At most {limit}; larger values need a human.",
    } = policy.max_from_setting;
    return (args, { tenant }) => {
      const limit = tenantSetting(tenant, namespace, setting);
      if (limit === undefined) return unconfigured(field, setting);
      const value = args[field];
      if (typeof value !== "number" || value <= limit) return { allow: true };
      const values = { value, limit, field };
      return { allow: false, field, reason: fillText(reason, values), hint: fillText(hint, values) };
    };
  }
  if ("approval_when" in policy) {
    const rule = policy.approval_when;
    if ("equals" in rule) {
      return (args) =>
        args[rule.field] === rule.equals
          ? { allow: true, approval: { required: true, reason: rule.reason } }
          : { allow: true };
    }
    return (args, { tenant }) => {
      const threshold = tenantSetting(tenant, namespace, rule.at_least_setting);
      if (threshold === undefined) return unconfigured(rule.field, rule.at_least_setting);
      const value = args[rule.field];
      return typeof value === "number" && value >= threshold
        ? { allow: true, approval: { required: true, reason: rule.reason } }
        : { allow: true };
    };
  }
  if ("within_user_claim" in policy) return withinUserClaim(policy.within_user_claim);
  const { field, setting, reason } = policy.waive_approval_below;
  return (args, { tenant }) => {
    const limit = tenantSetting(tenant, namespace, setting);
    const value = args[field];
    // No setting waives nothing: the approval the side-effect class asks for stays.
    if (limit === undefined || typeof value !== "number" || value > limit) return { allow: true };
    return { allow: true, approval: { required: false, reason: fillText(reason, { limit }) } };
  };
}

/**
 * An argument bounded by a claim of the run's user: a run that acts for no user is not bound by it
 * (the tenant's `users.required` makes every run name one); a user without a numeric claim of that
 * name fails closed, refused naming the claim; above the claim the call waits for a human or is refused.
 */
function withinUserClaim(rule: {
  field: string;
  at_most: string;
  otherwise: "approval" | "refuse";
  reason: string;
}): ToolPolicy<Args> {
  const claim = rule.at_most.slice("user.".length);
  return (args, { user }) => {
    if (!user) return { allow: true };
    const value = args[rule.field];
    if (typeof value !== "number") return { allow: true };
    const limit = user.claims[claim];
    if (typeof limit !== "number") {
      return {
        allow: false,
        field: rule.field,
        reason: `the run's user has no numeric "${claim}" claim, which this tool's policy needs`,
        hint: "This call cannot be made for this user until the identity provider asserts the claim; escalate to a human.",
      };
    }
    if (value <= limit) return { allow: true };
    const text = fillText(rule.reason, { value, limit, field: rule.field });
    if (rule.otherwise === "approval") return { allow: true, approval: { required: true, reason: text } };
    return {
      allow: false,
      field: rule.field,
      reason: text,
      hint: `At most ${limit} for this user; larger values need a human.`,
    };
  };
}
