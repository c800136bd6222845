/**
 * Whether this environment forwards fault requests to its upstreams. A configuration choice, like
 * every other difference between sandbox and production: `FAULT_INJECTION = "sandbox-header"` is set
 * in `[env.sandbox.vars]` only, and no code asks which environment it runs in.
 */
export type FaultInjection = "off" | "sandbox-header";

/** Reads the `FAULT_INJECTION` var; absent or empty is off, any other value is a deploy error. */
export function parseFaultInjection(raw: unknown): FaultInjection {
  if (raw === undefined || raw === null || raw === "") return "off";
  if (raw === "sandbox-header") return "sandbox-header";
  throw new Error(`FAULT_INJECTION must be "sandbox-header" or absent, not ${JSON.stringify(raw)}`);
}
