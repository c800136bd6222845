import type { EvalTenant } from "./case-types";

/**
 * The demo tenants' keys from .dev.vars.example: valid only against a local or sandbox proxy that
 * uses the committed example secrets, which is what the evaluation runs against.
 */
export const TENANT_KEYS: Record<EvalTenant, string> = { acme: "acme-demo-key", globex: "globex-demo-key" };
export const OPERATOR_KEYS: Record<EvalTenant, string> = {
  acme: "acme-operator-key",
  globex: "globex-operator-key",
};
