import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * One for the deployment: which catalog is live. An isolate announces the catalog it serves on its
 * first request, and the one announced last is live: a deploy (or a reload under `wrangler dev`)
 * starts isolates of the new catalog, which announce it, while isolates of the old one still hold
 * their clients' `subscriptions/listen` streams and learn here that the tools changed
 * (src/mcp/catalog-watch.ts). During a gradual deployment both versions start isolates, so the live
 * version can move back and forth: a listener is then told more than once, and lists again, which
 * costs a listing and is never wrong. Nothing else reads it; no call depends on it.
 */
export class CatalogBeacon extends DurableObject<Env> {
  /** Records `version` as live; an isolate of the live catalog changes nothing. */
  async announce(version: string): Promise<void> {
    if ((await this.ctx.storage.get<string>("live")) !== version) await this.ctx.storage.put("live", version);
  }

  /** The catalog announced last, or null before any isolate announced one. */
  async live(): Promise<string | null> {
    return (await this.ctx.storage.get<string>("live")) ?? null;
  }
}
