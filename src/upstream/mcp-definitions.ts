import type { Client, Tool } from "@modelcontextprotocol/client";
import type { McpServer, RemoteTool } from "../catalog/define-tool";
import { pinOf } from "../catalog/pin";

/**
 * What a remote MCP server says its tools are, listed with `tools/list` and kept per isolate for no
 * longer than the declaration's maximum (60 s unless it says otherwise) and the server's own
 * `ttlMs`, and no longer than until the server says its tools changed. A remote tool is called only
 * while its live definition has the pin a human reviewed; anything else is drift.
 */

interface Listed {
  at: number;
  maxAgeMs: number;
  tools: Map<string, { tool: Tool; pin: string }>;
}

const listed = new Map<string, Listed>();
const LISTED_MAX = 128;
/** When a server last told a call, for a tenant, that its tools changed: a listing begun by then is stale. */
const changed = new Map<string, number>();

export type PinCheck =
  | { ok: true; definition: Tool }
  | { ok: false; drift: "vanished" | "changed"; live_pin: string | null };

/** Whether the server's tool is still the one pinned, listing the server's tools when the list is stale. */
export async function checkPin(
  client: Client,
  remote: RemoteTool,
  tenant: string,
  signal: AbortSignal,
  now: number = Date.now(),
): Promise<PinCheck> {
  const current = await definitionsOf(client, remote.server, tenant, signal, now);
  const live = current.tools.get(remote.tool);
  if (!live) return { ok: false, drift: "vanished", live_pin: null };
  if (live.pin !== remote.pin) return { ok: false, drift: "changed", live_pin: live.pin };
  return { ok: true, definition: live.tool };
}

async function definitionsOf(
  client: Client,
  server: McpServer,
  tenant: string,
  signal: AbortSignal,
  now: number,
): Promise<Listed> {
  const key = `${server.name}\u0000${tenant}`;
  const known = listed.get(key);
  if (known && now - known.at < known.maxAgeMs && known.at > (changed.get(key) ?? -1)) return known;
  const tools = new Map<string, { tool: Tool; pin: string }>();
  let cursor: string | undefined;
  let ttlMs: number | null = null;
  do {
    // A resumed 2025 session skipped `initialize`, so its client knows no server capabilities, and
    // its listTools would answer an empty list: every pinned tool would read as vanished.
    const page = client.getServerCapabilities()
      ? await client.listTools(cursor ? { cursor } : undefined, { signal, cacheMode: "bypass" })
      : await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, { signal });
    for (const tool of page.tools) tools.set(tool.name, { tool, pin: await pinOf(tool) });
    const pageTtl = (page as { ttlMs?: unknown }).ttlMs;
    if (typeof pageTtl === "number") ttlMs = Math.min(ttlMs ?? pageTtl, pageTtl);
    cursor = page.nextCursor;
  } while (cursor);
  const fresh = {
    at: now,
    maxAgeMs: Math.min(server.definitions_max_age_ms, ttlMs ?? Number.POSITIVE_INFINITY),
    tools,
  };
  if (listed.size >= LISTED_MAX) listed.clear();
  listed.set(key, fresh);
  return fresh;
}

/**
 * The server said its tools changed (`notifications/tools/list_changed` on a call's stream): what
 * was listed until now is stale, so the next call of any of its tools lists them again.
 */
export function markDefinitionsChanged(server: McpServer, tenant: string, now: number = Date.now()): void {
  if (changed.size >= LISTED_MAX) changed.clear();
  changed.set(`${server.name}\u0000${tenant}`, now);
}

/** Forgets every listed definition, so the next call lists again: after a re-pin is deployed, or in a test. */
export function forgetRemoteDefinitions(): void {
  listed.clear();
  changed.clear();
}

/**
 * Makes every listing, and every notice of a change, `ms` older, as that much time passing would:
 * what a test of the re-list window uses instead of waiting the window out.
 */
export function ageRemoteDefinitions(ms: number): void {
  for (const entry of listed.values()) entry.at -= ms;
  for (const [key, at] of changed) changed.set(key, at - ms);
}
