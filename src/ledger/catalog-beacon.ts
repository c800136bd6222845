import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/** A catalog as the beacon holds it: its version, and each tool's version by `namespace.tool`. */
export interface LiveCatalog {
  version: string;
  /** Null when the announcer did not say (an isolate of a deploy before tools were announced). */
  tools: Readonly<Record<string, string>> | null;
}

/**
 * One for the deployment: which catalog is live. An isolate announces the catalog it serves (its
 * version and each tool's) on its first request, and the one announced last is live: a deploy (or a
 * reload under `wrangler dev`) starts isolates of the new catalog, which announce it, while isolates
 * of the old one still hold their clients' `subscriptions/listen` streams and learn here which tools
 * changed (src/mcp/catalog-watch.ts). During a gradual deployment both versions start isolates, so
 * the live version can move back and forth: a listener is then told more than once, and lists
 * again, which costs a listing and is never wrong. Nothing else reads it; no call depends on it.
 */
export class CatalogBeacon extends DurableObject<Env> {
  /** Records the catalog as live; an isolate of the live catalog changes nothing. */
  async announce(version: string, tools?: Readonly<Record<string, string>>): Promise<void> {
    if ((await this.ctx.storage.get<string>("live")) === version) return;
    await this.ctx.storage.put({ live: version, tools: tools ?? null });
  }

  /** The catalog announced last, or null before any isolate announced one. */
  async live(): Promise<LiveCatalog | null> {
    const stored = await this.ctx.storage.get<string | Record<string, string> | null>(["live", "tools"]);
    const version = stored.get("live");
    if (typeof version !== "string") return null;
    const tools = stored.get("tools");
    return { version, tools: typeof tools === "object" && tools !== null ? tools : null };
  }
}
