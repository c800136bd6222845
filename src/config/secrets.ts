import type { Env } from "../env";
import type { EnvironmentName } from "../wire/envelope";

/**
 * The secrets every environment of the proxy needs. Without one the proxy cannot authenticate a
 * caller, sign a run token, an upstream credential or an audit receipt, so it refuses all traffic and names what is
 * missing (src/startup.ts). Keep this list, `.dev.vars.example` and the template of docs/deploying.md,
 * `secrets.production.example.json`, in step: test/workerd/startup.test.ts checks the first two agree.
 */
export const REQUIRED_SECRETS = [
  "TENANT_KEYS",
  "OPERATOR_KEYS",
  "RUN_TOKEN_KEYS",
  "UPSTREAM_SIGNING_KEYS",
  "AUDIT_SIGNING_KEYS",
] as const satisfies readonly (keyof Env)[];

/**
 * Secrets the proxy runs without: no agent keys means runs are opened with tenant keys only; no
 * webhook secret means no approval webhook is sent (src/approvals/notify.ts); no metrics token
 * means Analytics Engine's health events are recorded but not read back (src/metrics/read.ts).
 */
export const OPTIONAL_SECRETS = [
  "AGENT_KEYS",
  "APPROVAL_WEBHOOK_SECRET",
  "METRICS_API_TOKEN",
] as const satisfies readonly (keyof Env)[];

export type RequiredSecret = (typeof REQUIRED_SECRETS)[number];

/** The required secrets this environment lacks (absent, or only whitespace), in the order above. */
export function missingSecrets(env: object): RequiredSecret[] {
  const values = env as Record<string, unknown>;
  return REQUIRED_SECRETS.filter((name) => {
    const value = values[name];
    return typeof value !== "string" || value.trim() === "";
  });
}

/** A sentence naming the missing secrets and how to set them, for the envelope and the log. */
export function missingSecretsProblem(names: readonly string[], environment: EnvironmentName): string {
  const list =
    names.length === 1
      ? `secret ${names[0]} is`
      : `secrets ${names.slice(0, -1).join(", ")} and ${names.at(-1)} are`;
  return (
    `the ${list} not set. Set each with \`npx wrangler secret put <NAME> --env ${environment}\`, or all at ` +
    `once with \`npx wrangler secret bulk secrets.${environment}.json --env ${environment}\` (template: ` +
    `secrets.production.example.json; docs/deploying.md); for \`npm start\`, in .dev.vars`
  );
}
