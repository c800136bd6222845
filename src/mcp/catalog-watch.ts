import type { ServerEvent, ServerEventBus } from "@modelcontextprotocol/server";
import { loadConfig } from "../config/load";
import type { Env } from "../env";
import { type LiveCatalog, liveCatalog, servedCatalog } from "../ledger/catalog-client";

/** Open listen streams one isolate holds at most; one more is refused with -32603. */
export const MAX_LISTENERS = 1_000;

let listening = 0;

/** Whether this isolate can hold one more listen stream. */
export function canListen(): boolean {
  return listening < MAX_LISTENERS;
}

/** The tools a stream's client lists: its namespace's, or the refs it was opened with. */
export interface WatchedTools {
  namespace: string;
  tools: readonly string[] | null;
}

/** Whether `ref` is one of the watched tools. */
function watched(scope: WatchedTools, ref: string): boolean {
  return scope.tools === null ? ref.startsWith(`${scope.namespace}.`) : scope.tools.includes(ref);
}

/**
 * Whether going from catalog `known` to `live` changes a watched tool: one added, gone, or of
 * another version. A catalog announced without its tools' versions may have changed any.
 */
export function touchesWatched(known: LiveCatalog, live: LiveCatalog, scope: WatchedTools): boolean {
  if (known.version === live.version) return false;
  if (known.tools === null || live.tools === null) return true;
  const refs = new Set([...Object.keys(known.tools), ...Object.keys(live.tools)]);
  return [...refs].some((ref) => watched(scope, ref) && known.tools?.[ref] !== live.tools?.[ref]);
}

/**
 * The source of `subscriptions/listen`'s change events for one stream. A run's tools change only
 * when another catalog goes live (a deploy, or a reload under `wrangler dev`), never because of a
 * call: so each stream asks the deployment's catalog beacon (src/ledger/catalog-beacon.ts) every
 * `CATALOG_WATCH_MS` which catalog is live, and reports `tools_list_changed` each time it differs
 * from the one the stream last knew in a tool the stream's client lists (`scope`), starting from
 * the catalog of the isolate that serves it: a change to other tools, other namespaces or another
 * tenant's configuration tells it nothing. The asking runs in the stream's own request, so it ends
 * with the stream; the SDK's listen router does the rest (the acknowledgement, the filter, the
 * subscription id, keep-alives, teardown).
 */
export function catalogWatch(env: Env, scope: WatchedTools): ServerEventBus {
  const listeners = new Set<(event: ServerEvent) => void>();
  const publish = (event: ServerEvent) => {
    for (const listener of [...listeners]) listener(event);
  };
  return {
    publish,
    subscribe(listener) {
      listeners.add(listener);
      listening += 1;
      let known: LiveCatalog | null = null;
      let asking = false;
      const ask = async () => {
        if (asking) return;
        asking = true;
        try {
          known ??= await servedCatalog();
          const live = await liveCatalog(env);
          if (live !== null && live.version !== known.version && listeners.has(listener)) {
            const touched = touchesWatched(known, live, scope);
            known = live;
            if (touched) listener({ kind: "tools_list_changed" });
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
