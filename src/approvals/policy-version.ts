import type { ToolSpec } from "../catalog/define-tool";
import { changedParts, PART_WORDS, type ToolVersion } from "../catalog/tool-version";
import type { TenantConfig } from "../config/tenants";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";
import type { PolicyBinding } from "../wire/approval";
import { tenantRulesFor } from "./tenant-rules";

/**
 * The policy one tool's approvals are asked and decided under: the tool's version
 * (`catalog/tool-version.ts`) and the tenant's rules for that tool (`tenant-rules.ts`), together
 * `version`. A human approves a call under these; if either changes, the pending approval no longer
 * means what it meant, and it is invalidated rather than executed, saying which changed. Nothing
 * else is part of it: another tool, another namespace, another tenant or an unrelated key of this
 * tenant's configuration voids nothing.
 */
export interface CurrentPolicy {
  version: string;
  binding: PolicyBinding;
}

/** Policies already computed, by tenant configuration object (parsed once per isolate) and tool object. */
const computed = new WeakMap<TenantConfig, WeakMap<ToolSpec, Promise<CurrentPolicy>>>();

/** The policy of `tool` (whose version is `version`) for `tenant`, computed once per pair. */
export function policyOf(tool: ToolSpec, version: ToolVersion, tenant: TenantConfig): Promise<CurrentPolicy> {
  let byTool = computed.get(tenant);
  if (!byTool) {
    byTool = new WeakMap();
    computed.set(tenant, byTool);
  }
  let policy = byTool.get(tool);
  if (!policy) {
    policy = computePolicy(version, tenantRulesFor(tenant, tool));
    byTool.set(tool, policy);
  }
  return policy;
}

async function computePolicy(version: ToolVersion, rules: Record<string, unknown>): Promise<CurrentPolicy> {
  const tenant: Record<string, string> = {};
  for (const [name, value] of Object.entries(rules)) {
    tenant[name] = (await sha256Hex(canonicalJson(value))).slice(0, 8);
  }
  const whole = await sha256Hex(canonicalJson([version.version, rules]));
  return {
    version: `pol_${whole.slice(0, 16)}`,
    binding: { tool: { version: version.version, parts: { ...version.parts } }, tenant },
  };
}

/** The rules whose digests differ between two bindings, sorted: present on one side only counts. */
function changedRules(before: Readonly<Record<string, string>>, after: Readonly<Record<string, string>>) {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((name) => before[name] !== after[name]).sort();
}

/**
 * Why an approval of `tool` asked under `asked` can no longer execute under `current`, in words an
 * operator and the agent read: its tool changed (naming what), the tenant's rules for it changed
 * (naming which), or the tool is no longer the run's. An approval asked before bindings were
 * recorded is told the policy changed.
 */
export function policyChange(
  tool: string,
  asked: PolicyBinding | null,
  current: CurrentPolicy | null,
): string {
  if (current === null) return `the tool ${tool} is no longer offered to this run`;
  if (asked === null) return "the policy changed since it was requested";
  const reasons: string[] = [];
  if (asked.tool.version !== current.binding.tool.version) {
    const parts = changedParts(asked.tool.parts, current.binding.tool.parts).map((part) => PART_WORDS[part]);
    reasons.push(`the tool ${tool} changed since it was requested (${parts.join(", ") || "its contract"})`);
  }
  const rules = changedRules(asked.tenant, current.binding.tenant);
  if (rules.length > 0) {
    reasons.push(`this tenant's rules for ${tool} changed since it was requested (${rules.join(", ")})`);
  }
  return reasons.length > 0 ? reasons.join("; and ") : "the policy changed since it was requested";
}
