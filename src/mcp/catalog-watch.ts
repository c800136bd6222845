import type { ServerEvent, ServerEventBus } from "@modelcontextprotocol/server";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { liveCatalog } from "../ledger/catalog-client";

/** Open listen streams one isolate holds at most; one more is refused with -32603. */
export const MAX_LISTENERS = 1_000;

let listening = 0;

/** Whether this isolate can hold one more listen stream. */
export function canListen(): boolean {
  return listening < MAX_LISTENERS;
}

/**
 * The source of `subscriptions/listen`'s change events for one stream. A run's tools change only
 * when another catalog goes live (a deploy, or a reload under `wrangler dev`), never because of a
 * call: so each stream asks the deployment's catalog beacon (src/ledger/catalog-beacon.ts) every
 * `CATALOG_WATCH_MS` which catalog is live, and reports `tools_list_changed` each time it differs
 * from the one the stream last knew, starting from the catalog of the isolate that serves it. The
 * asking runs in the stream's own request, so it ends with the stream; the SDK's listen router does
 * the rest (the acknowledgement, the filter, the subscription id, keep-alives, teardown).
 */
export function catalogWatch(env: Env, served: string): ServerEventBus {
  const listeners = new Set<(event: ServerEvent) => void>();
  const publish = (event: ServerEvent) => {
    for (const listener of [...listeners]) listener(event);
  };
  return {
    publish,
    subscribe(listener) {
      listeners.add(listener);
      listening += 1;
      let known = served;
      let asking = false;
      const ask = async () => {
        if (asking) return;
        asking = true;
        try {
          const live = await liveCatalog(env);
          if (live !== null && live !== known && listeners.has(listener)) {
            known = live;
            listener({ kind: "tools_list_changed" });
          }
        } catch {
          // The beacon out of reach tells nothing: the next tick asks again.
        } finally {
          asking = false;
        }
      };
      const timer = setInterval(() => void ask(), loadConfig(env).catalogWatchMs);
      return () => {
        if (!listeners.delete(listener)) return;
        listening -= 1;
        clearInterval(timer);
      };
    },
  };
}
