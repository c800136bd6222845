import { env } from "cloudflare:workers";
import { forgetConfig } from "../../src/config/load";

/** The deployment's tenant table as wrangler.toml gives it: tenant id → settings. */
export type TenantTable = Record<string, Record<string, unknown>>;

/**
 * Changes the deployment's `TENANTS` as a deploy of a new configuration would: the table is edited in
 * place (every `env` of the runtime, the Worker's and each Durable Object's, holds this one object)
 * and the isolate reads it again on its next request, as a new deploy's isolates do. Returns what
 * puts the table back as it was.
 */
export function reviseTenants(edit: (tenants: TenantTable) => void): () => void {
  const table = env.TENANTS as unknown;
  if (typeof table !== "object" || table === null) throw new Error("TENANTS is not an object here");
  const tenants = table as TenantTable;
  const before = structuredClone(tenants);
  edit(tenants);
  forgetConfig();
  return () => {
    for (const id of Object.keys(tenants)) delete tenants[id];
    Object.assign(tenants, before);
    forgetConfig();
  };
}
