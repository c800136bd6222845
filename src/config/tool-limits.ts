import * as z from "zod";
import { lazily } from "../core/lazily";

/**
 * A tenant's limits on single tools, across all its runs: namespace → tool → limit. Each is a token
 * bucket like the tenant's other rate limits (`calls` at once, refilled evenly over `window_s`),
 * kept per tool, or per tool and subject when `per` names an argument (`customer_id`: each customer
 * has its own bucket). Which tools a namespace has is checked against the catalog by
 * `npm run tools -- check`; the namespace is checked here.
 */
function integer(min: number, max: number) {
  const error = (issue: { input?: unknown }) =>
    `must be an integer from ${min} to ${max} (got ${JSON.stringify(issue.input) ?? "nothing"})`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

const toolLimitSchema = lazily(() =>
  z.strictObject({
    calls: integer(1, 1_000_000).describe("Calls of the tool per window, all the tenant's runs together."),
    window_s: integer(1, 60)
      .default(60)
      .describe("The window in seconds (at most 60, as for every rate limit: the buckets live in memory)."),
    per: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
        error: (issue) =>
          `${JSON.stringify(issue.input)} is not an argument name: letters, digits and _, such as customer_id`,
      })
      .optional()
      .describe("A top-level argument of the tool: each of its values gets a bucket of its own."),
  }),
);
export type ToolLimit = z.infer<ReturnType<typeof toolLimitSchema>>;

/** Built on first use, like every schema of `TENANTS` (`tenants.ts`). */
export const toolLimitsSchema = lazily(() =>
  z
    .record(z.string(), z.record(z.string(), toolLimitSchema()))
    .default({})
    .describe("Per-tool rate limits: namespace → tool → limit."),
);
export type ToolLimits = z.infer<ReturnType<typeof toolLimitsSchema>>;

/** A tool limit must name one of the tenant's namespaces: any other would never apply. */
export function toolLimitNamespaceIssues(tenant: {
  namespaces: readonly string[];
  tool_limits: ToolLimits;
}): { path: string[]; message: string }[] {
  return Object.keys(tenant.tool_limits)
    .filter((namespace) => !tenant.namespaces.includes(namespace))
    .map((namespace) => ({
      path: ["tool_limits", namespace],
      message: `"${namespace}" is not one of the tenant's namespaces (${tenant.namespaces.join(", ")})`,
    }));
}

/** The limit a tenant set on a tool, if any. */
export function toolLimitOf(limits: ToolLimits, namespace: string, tool: string): ToolLimit | null {
  return limits[namespace]?.[tool] ?? null;
}
