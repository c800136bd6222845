import type { ToolSpec } from "../catalog/define-tool";
import type { TenantConfig } from "../config/tenants";

/**
 * Who approves one call, decided when its approval opens and bound to it like its arguments: the
 * roles whose decision counts (none: any operator of the tenant) and how many distinct operators
 * must approve before it executes (2 above the tenant's `two_person_above`).
 */
export interface ApproverRequirement {
  roles: string[];
  approvals: 1 | 2;
}

/** One operator's approval, as the approval keeps it. */
export interface Approver {
  operator: string;
  name: string | null;
  at: string;
}

/** Any one operator of the tenant: an approval opened before roles existed, or a tool naming none. */
export const ANY_OPERATOR: ApproverRequirement = { roles: [], approvals: 1 };

/**
 * The requirement of a call of `tool` with `args` for `tenant`: the tool's roles, replaced by the
 * role of the tenant's highest rule whose amount the call's value is above, and two approvers above
 * `two_person_above`. A tool without a declared value has no amount, so only its roles apply.
 */
export function approverRequirement(
  tool: Pick<ToolSpec, "namespace" | "name" | "approval_roles" | "value">,
  args: Record<string, unknown>,
  tenant: Pick<TenantConfig, "approvers">,
): ApproverRequirement {
  const settings = tenant.approvers[tool.namespace]?.[tool.name];
  const raw = tool.value ? args[tool.value.field] : undefined;
  const amount = typeof raw === "number" ? raw : null;
  let roles = [...tool.approval_roles];
  if (settings && amount !== null) {
    const raised = settings.rules.filter((rule) => amount > rule.above).sort((a, b) => b.above - a.above)[0];
    if (raised) roles = [raised.role];
  }
  const two =
    settings?.two_person_above !== undefined && amount !== null && amount > settings.two_person_above;
  return { roles, approvals: two ? 2 : 1 };
}

/** Whether an operator holding `held` may decide under `roles` (none: anyone of the tenant). */
export function holdsRole(roles: readonly string[], held: readonly string[]): boolean {
  return roles.length === 0 || roles.some((role) => held.includes(role));
}

/**
 * Whether two approvals come from one person: the same operator id, or two keys configured with
 * the same name (one person's old and new key while they rotate it). One person never counts twice.
 */
export function samePerson(
  a: Pick<Approver, "operator" | "name">,
  b: Pick<Approver, "operator" | "name">,
): boolean {
  if (a.operator === b.operator) return true;
  return a.name !== null && b.name !== null && nameKey(a.name) === nameKey(b.name);
}

function nameKey(name: string): string {
  return name.trim().replace(/\s+/g, " ").toLowerCase();
}

/** "1 of 2": how far an approval that needs more than one approver has come. */
export function approvalProgress(approvers: readonly Approver[], needed: number): string {
  return `${Math.min(approvers.length, needed)} of ${needed}`;
}

/**
 * Who approves a call an operator edited: never fewer people or a lower role than the call as
 * asked. The tenant's rules rise with the amount, so the larger of the two amounts decides the
 * role; the number of approvers is the larger of the two.
 */
export function editedRequirement(
  tool: Pick<ToolSpec, "namespace" | "name" | "approval_roles" | "value">,
  asked: { args: Record<string, unknown>; requirement: ApproverRequirement },
  edited: Record<string, unknown>,
  tenant: Pick<TenantConfig, "approvers">,
): ApproverRequirement {
  const forEdited = approverRequirement(tool, edited, tenant);
  const amount = (args: Record<string, unknown>) => {
    const raw = tool.value ? args[tool.value.field] : undefined;
    return typeof raw === "number" ? raw : Number.NEGATIVE_INFINITY;
  };
  const roles = amount(edited) > amount(asked.args) ? forEdited.roles : asked.requirement.roles;
  return { roles, approvals: Math.max(forEdited.approvals, asked.requirement.approvals) === 2 ? 2 : 1 };
}
