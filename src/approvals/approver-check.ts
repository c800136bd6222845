import type { ConfiguredOperator } from "../auth/operator-keys";
import type { ToolSpec } from "../catalog/define-tool";
import type { TenantConfig } from "../config/tenants";
import { approverRequirement, holdsRole, samePerson } from "./approvers";

/**
 * Whether every approval can find its approvers, checked at start-up (and by `npm run tools --
 * check`) against the catalog, the tenants and OPERATOR_KEYS: every role a tool names is held by an
 * operator of each tenant that serves the tool, every role a tenant's `approvers` rule names by one
 * of its operators (any other is an unknown role), and a two-person rule has two people to meet it.
 * Each problem is one sentence naming where it lies; `at` prefixes the tenant settings' path
 * (`TENANTS` in the Worker, `wrangler.toml: env.sandbox.vars.TENANTS` in the tools).
 */
export function approverProblems(
  tools: readonly Pick<ToolSpec, "namespace" | "name" | "approval_roles" | "value">[],
  tenant: { id: string; config: Pick<TenantConfig, "namespaces" | "approvers">; at: string },
  operators: readonly ConfiguredOperator[],
): string[] {
  const problems: string[] = [];
  const { id, config } = tenant;
  const held = [...new Set(operators.flatMap((operator) => operator.roles))];
  const heldText = held.length > 0 ? `roles held: ${held.join(", ")}` : "none holds a role";
  // A tenant with no operator decides nothing: its tools' roles cannot be met, nor need to be.
  if (operators.length > 0) {
    for (const tool of tools) {
      if (!config.namespaces.includes(tool.namespace)) continue;
      const missing = tool.approval_roles.filter((role) => !held.includes(role));
      if (missing.length > 0 && missing.length === tool.approval_roles.length) {
        problems.push(
          `tool ${tool.namespace}.${tool.name} names the role "${missing.join('" or "')}", which no operator of tenant ${id} holds (OPERATOR_KEYS.${id}: ${heldText})`,
        );
      }
    }
  }
  for (const [namespace, byTool] of Object.entries(config.approvers)) {
    for (const [name, settings] of Object.entries(byTool)) {
      const at = `${tenant.at}.${id}.approvers.${namespace}.${name}`;
      const tool = tools.find((candidate) => candidate.namespace === namespace && candidate.name === name);
      if (!config.namespaces.includes(namespace)) {
        problems.push(
          `${at}: "${namespace}" is not one of the tenant's namespaces (${config.namespaces.join(", ")})`,
        );
        continue;
      }
      // A namespace the checked catalog lacks (a fixture's, a code namespace) is not judged here.
      if (!tool && !tools.some((candidate) => candidate.namespace === namespace)) continue;
      if (!tool) {
        problems.push(`${at}: "${name}" is not a tool of ${namespace}`);
        continue;
      }
      if (!tool.value) {
        problems.push(
          `${at}: ${name} declares no value, so its calls have no amount to compare; declare value in its catalog entry or remove these rules`,
        );
        continue;
      }
      settings.rules.forEach((rule, index) => {
        if (!held.includes(rule.role)) {
          problems.push(
            `${at}.rules[${index}].role: unknown role "${rule.role}": no operator of tenant ${id} holds it (${heldText})`,
          );
        }
      });
      const threshold = settings.two_person_above;
      if (threshold === undefined) continue;
      // The roles that decide above the threshold: just above it, and above each higher rule.
      const amounts = [
        threshold,
        ...settings.rules.map((rule) => rule.above).filter((above) => above > threshold),
      ];
      for (const above of amounts) {
        const { roles } = approverRequirement(
          tool,
          { [tool.value.field]: above + 1 },
          { approvers: config.approvers },
        );
        const people = distinctPeople(operators.filter((operator) => holdsRole(roles, operator.roles)));
        if (people.length < 2) {
          const who = roles.length > 0 ? `hold the role "${roles.join('" or "')}"` : "exist";
          const found = people.length === 0 ? "none" : `only ${people.map(nameOf).join(", ")}`;
          problems.push(
            `${at}.two_person_above: two different operators must approve above ${threshold} ${tool.value.currency} minor units, but of tenant ${id}'s operators that ${who} there is ${found}; add a second operator key with that role to OPERATOR_KEYS.${id} or remove the rule`,
          );
          break;
        }
      }
    }
  }
  return problems;
}

/** The operators counted once per person: two keys under one name are one person. */
function distinctPeople(operators: readonly ConfiguredOperator[]): ConfiguredOperator[] {
  const people: ConfiguredOperator[] = [];
  for (const operator of operators) {
    const me = { operator: operator.id, name: operator.name };
    if (!people.some((other) => samePerson({ operator: other.id, name: other.name }, me)))
      people.push(operator);
  }
  return people;
}

function nameOf(operator: ConfiguredOperator): string {
  return operator.name ?? operator.id;
}
