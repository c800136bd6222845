import type { ToolSpec } from "../catalog/define-tool";
import { tenantSetting } from "../catalog/policy-vocabulary";
import type { TenantConfig } from "../config/tenants";

type PolicyDeclaration = NonNullable<ToolSpec["declared"]>["policies"][number];

/** The setting a declared policy reads, if it reads one. */
function settingOf(policy: PolicyDeclaration): string | null {
  if ("max_from_setting" in policy) return policy.max_from_setting.setting;
  if ("waive_approval_below" in policy) return policy.waive_approval_below.setting;
  if ("approval_when" in policy && "at_least_setting" in policy.approval_when) {
    return policy.approval_when.at_least_setting;
  }
  return null;
}

/** Every number a tenant's configuration holds at its top level, and its settings for a namespace. */
function everySetting(tenant: TenantConfig, namespace: string): Record<string, number> {
  const own = Object.entries(tenant).filter(
    (entry): entry is [string, number] => typeof entry[1] === "number",
  );
  return { ...Object.fromEntries(own), ...tenant.settings[namespace] };
}

/**
 * The tenant's rules that apply to one tool's calls, each under the name an operator knows it by:
 * what the tool's policies read (a threshold such as `max_refund_cents`, an `owns.order_id`
 * pattern), what a tainted run's call of its class gets, the value caps of its currency, who
 * approves it (`approvers.support.issue_refund`) and whether its effect may repeat across runs. An
 * approval is bound to a digest of these (`policy-version.ts`): editing any other key of the
 * tenant's configuration, or another tenant's, leaves it standing. A tool defined in code, whose
 * policies could read any setting, counts every setting of its namespace.
 */
export function tenantRulesFor(tenant: TenantConfig, tool: ToolSpec): Record<string, unknown> {
  const { namespace, name } = tool;
  const rules: Record<string, unknown> = {};
  const declared = tool.declared?.policies;
  if (declared) {
    for (const policy of declared) {
      if ("owned_by_tenant" in policy) {
        rules[`owns.${policy.owned_by_tenant}`] = tenant.owns[policy.owned_by_tenant] ?? null;
        continue;
      }
      const setting = settingOf(policy);
      if (setting !== null) rules[setting] = tenantSetting(tenant, namespace, setting) ?? null;
    }
  } else if (tool.policy.length > 0) {
    rules.settings = everySetting(tenant, namespace);
    rules.owns = tenant.owns;
  }
  if (tool.side_effect === "write" || tool.side_effect === "destructive") {
    rules[`tainted_runs.${tool.side_effect}`] = tenant.tainted_runs[tool.side_effect];
  }
  if (tool.value) rules[`value_caps.${tool.value.currency}`] = tenant.value_caps[tool.value.currency] ?? null;
  rules[`approvers.${namespace}.${name}`] = tenant.approvers[namespace]?.[name] ?? null;
  rules[`repeat_effects.${namespace}.${name}`] = tenant.repeat_effects[namespace]?.includes(name) ?? false;
  return rules;
}
