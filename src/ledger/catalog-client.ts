import { toolRef } from "../catalog/subset";
import type { Env } from "../env";
import { catalog } from "../tools";
import type { LiveCatalog } from "./catalog-beacon";

export type { LiveCatalog } from "./catalog-beacon";

/** The one beacon of the deployment. */
function beacon(env: Env) {
  return env.CATALOG_BEACON.get(env.CATALOG_BEACON.idFromName("catalog"));
}

/** The catalog this isolate serves: its version and each of its tools'. */
export async function servedCatalog(): Promise<LiveCatalog> {
  const tools = catalog.all();
  const versions = await Promise.all(tools.map((tool) => catalog.toolVersion(tool)));
  return {
    version: await catalog.version(),
    tools: Object.fromEntries(tools.map((tool, index) => [toolRef(tool), versions[index]?.version ?? ""])),
  };
}

let announced = false;

/**
 * Tells the beacon, once per isolate and after the answer, which catalog this isolate serves. A lost
 * announcement is retried by the isolate's next request; it never delays or fails one.
 */
export function announceCatalog(env: Env, ctx: ExecutionContext): void {
  if (announced) return;
  announced = true;
  ctx.waitUntil(
    servedCatalog()
      .then((served) => beacon(env).announce(served.version, served.tools ?? undefined))
      .catch(() => {
        announced = false;
      }),
  );
}

/** Forgets the announcement, so the next request makes it again: for a beacon whose storage was wiped. */
export function forgetAnnouncement(): void {
  announced = false;
}

/** The catalog live in the deployment, as the beacon last heard it; null when unknown. */
export async function liveCatalog(env: Env): Promise<LiveCatalog | null> {
  return beacon(env).live();
}
