import * as z from "zod";

/** The longest approval SLA a tenant may set: an approval's whole window is a day. */
const MAX_SLA_S = 24 * 60 * 60;

const slaError = (issue: { input?: unknown }) =>
  `must be a whole number of seconds from 1 to ${MAX_SLA_S} (got ${JSON.stringify(issue.input) ?? "nothing"}); an approval's SLA cannot be negative or zero`;

/**
 * A tenant's settings for approvals nobody decides in time, spread into `tenantConfigSchema` (built on
 * first use, like every schema of `TENANTS`):
 * `approval_sla_s`, how long an approval may wait before it is overdue (for tools that declare no
 * `approval.sla_s` of their own; absent: no SLA), and `escalation_role`, the role an overdue
 * approval is announced to, once, on the signed approval webhook (`approval.overdue`).
 */
export const approvalEscalationSettings = () => ({
  approval_sla_s: z
    .number({ error: slaError })
    .int({ error: slaError })
    .min(1, { error: slaError })
    .max(MAX_SLA_S, { error: slaError })
    .optional(),
  escalation_role: z
    .string()
    .regex(
      /^[a-z][a-z0-9_-]{0,63}$/,
      "must be a role name: lowercase letters, digits, _ and -, such as support_lead",
    )
    .optional(),
});
