import * as z from "zod";

/** How long a tenant's receipts are kept when it sets nothing: past a year and its audit season. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 400;
/** The longest retention a tenant may set: ten years. */
const MAX_AUDIT_RETENTION_DAYS = 3650;

const retentionError = (issue: { input?: unknown }) =>
  `must be a whole number of days from 1 to ${MAX_AUDIT_RETENTION_DAYS} (got ${JSON.stringify(issue.input) ?? "nothing"})`;

/**
 * A tenant's audit log (docs/audit.md): how many days each receipt is kept after it was written
 * (`retention_days`, 400 by default), and whether its receipts are pushed, in signed batches, on the
 * deployment's webhook as they are written (`push`, off by default: `GET /v1/audit` serves them
 * either way). Built on first use, like every schema of `TENANTS`.
 */
export const auditSettingsSchema = () =>
  z
    .strictObject({
      retention_days: z
        .number({ error: retentionError })
        .int({ error: retentionError })
        .min(1, { error: retentionError })
        .max(MAX_AUDIT_RETENTION_DAYS, { error: retentionError })
        .default(DEFAULT_AUDIT_RETENTION_DAYS),
      push: z.boolean().default(false),
    })
    .prefault({});
