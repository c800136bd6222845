import type { Env } from "../env";
import { catalog } from "../tools";

/** The one beacon of the deployment. */
function beacon(env: Env) {
  return env.CATALOG_BEACON.get(env.CATALOG_BEACON.idFromName("catalog"));
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
    catalog
      .version()
      .then((version) => beacon(env).announce(version))
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
export async function liveCatalog(env: Env): Promise<string | null> {
  return beacon(env).live();
}
