import * as z from "zod";
import { RoleSchema } from "../auth/operator-keys";
import { lazily } from "../core/lazily";

/**
 * A tenant's rules on who approves a tool's calls, beyond the roles the tool's declaration names:
 * namespace → tool → rules. Amounts are in the minor unit of the currency the tool declares for its
 * `value` (cents of USD for `issue_refund`).
 *
 * @example
 * approvers = { support = { issue_refund = { rules = [{ above = 50000, role = "finance_lead" }], two_person_above = 100000 } } }
 */

function amount() {
  const error = (issue: { input?: unknown }) =>
    `must be an amount: an integer ≥ 0 in the minor unit of the tool's value currency (got ${JSON.stringify(issue.input) ?? "nothing"})`;
  return z.number({ error }).int({ error }).min(0, { error });
}

/**
 * One tool's rules. Built on first use, like every schema of `TENANTS` (`tenants.ts`), and only
 * inside `approversSchema`, which keeps it.
 */
const toolApproversSchema = () =>
  z.strictObject({
    /** Above `above`, only an operator holding `role` decides (it replaces the tool's own roles). */
    rules: z.array(z.strictObject({ above: amount(), role: RoleSchema })).default([]),
    /** Above this amount two distinct operators must approve; a single rejection still ends it. */
    two_person_above: amount().optional(),
  });

export const approversSchema = lazily(() =>
  z
    .record(z.string(), z.record(z.string(), toolApproversSchema()))
    .default({})
    .describe("Who approves each tool's calls above amounts: namespace → tool → rules."),
);
