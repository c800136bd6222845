import type { Client, Tool } from "@modelcontextprotocol/client";
import type { McpServer, RemoteTool } from "../catalog/define-tool";
import { pinOf } from "../catalog/pin";

/**
 * What a remote MCP server says its tools are, listed with `tools/list` and kept per isolate for no
 * longer than the declaration's maximum and the server's own `ttlMs`. A remote tool is called only
 * while its live definition has the pin a human reviewed; anything else is drift.
 */

interface Listed {
  at: number;
  maxAgeMs: number;
  tools: Map<string, { tool: Tool; pin: string }>;
}

const listed = new Map<string, Listed>();
const LISTED_MAX = 128;

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
  if (known && now - known.at < known.maxAgeMs) return known;
  const tools = new Map<string, { tool: Tool; pin: string }>();
  let cursor: string | undefined;
  let ttlMs: number | null = null;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { signal, cacheMode: "bypass" });
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

/** Forgets every listed definition, so the next call lists again: after a re-pin is deployed, or in a test. */
export function forgetRemoteDefinitions(): void {
  listed.clear();
}
