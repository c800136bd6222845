import type { Env } from "../env";
import { loadConfig } from "./load";
import type { Residency, ResidencyMode } from "./residency";

/**
 * The one place a Durable Object of a tenant is named and reached: its runs' ledgers and every
 * tenant-wide object (directory, effect shards, cap pools, rate limiters, health counters). The
 * tenant's residency (TENANTS `residency`) decides the namespace (`env.X.jurisdiction("eu")`) and
 * the location hint; it is read from the tenant's configuration every time, so a run id or an
 * approval id always leads back to the same object.
 */

/** The part of a Durable Object namespace placement uses (a real binding, or one a test watches). */
export interface PlaceableNamespace<Stub> {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions): Stub;
  jurisdiction(jurisdiction: DurableObjectJurisdiction): PlaceableNamespace<Stub>;
}

/** The object `name` of a namespace, placed as `residency` says. Pure: no configuration read. */
export function placedObject<Stub>(
  namespace: PlaceableNamespace<Stub>,
  residency: Residency,
  mode: ResidencyMode,
  name: string,
): Stub {
  const { jurisdiction, location_hint } = residency;
  let home = namespace;
  let placedName = name;
  if (jurisdiction && mode === "cloudflare") home = namespace.jurisdiction(jurisdiction);
  else if (jurisdiction) placedName = `${jurisdiction}:${name}`;
  const id = home.idFromName(placedName);
  return location_hint ? home.get(id, { locationHint: location_hint }) : home.get(id);
}

/** A tenant's residency; a tenant the configuration does not know has none. */
export function residencyOf(env: Env, tenant: string): Residency {
  return loadConfig(env).tenants[tenant]?.residency ?? {};
}

/** The object `name` of `tenant` in a namespace of the proxy, where the tenant's residency puts it. */
export function tenantObject<Stub>(
  env: Env,
  namespace: PlaceableNamespace<Stub>,
  tenant: string,
  name: string,
): Stub {
  return placedObject(namespace, residencyOf(env, tenant), loadConfig(env).residencyMode, name);
}
