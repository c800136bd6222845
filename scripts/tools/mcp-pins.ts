// The reviewed definitions of a namespace's remote MCP tools: catalog/<ns>.pins.json, keyed by the
// server's tool name. A declaration's `pin` is the digest of one of them; the Worker never reads
// this file (it compares the live definition's digest with the pin), people and `check` do.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type PinnedDefinition, pinnedText } from "../../src/catalog/pin";

export type Pins = Record<string, PinnedDefinition>;

/** The part of a listed tool a pin covers, and nothing else (no title, icons or execution). */
export function pinnedDefinition(tool: PinnedDefinition): PinnedDefinition {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    outputSchema: tool.outputSchema,
    annotations: tool.annotations,
  };
}

/**
 * `pinOf` of src/catalog/pin.ts, synchronously: the same canonical JSON, hashed by node:crypto, so
 * the synchronous `check` can compare a pin with the reviewed definition (a test proves both agree).
 */
export function pinDigest(definition: PinnedDefinition): string {
  return `sha256:${createHash("sha256").update(pinnedText(definition), "utf8").digest("hex")}`;
}

export const pinsFileOf = (catalogDir: string, namespace: string) =>
  join(catalogDir, `${namespace}.pins.json`);

/** The namespace's pins file, or null when there is none or it is not a JSON object. */
export function readPins(catalogDir: string, namespace: string): Pins | null {
  const path = pinsFileOf(catalogDir, namespace);
  if (!existsSync(path)) return null;
  try {
    const pins: unknown = JSON.parse(readFileSync(path, "utf8"));
    return typeof pins === "object" && pins !== null && !Array.isArray(pins) ? (pins as Pins) : null;
  } catch {
    return null;
  }
}

/** Pretty JSON with keys sorted at every depth, so a re-pin's diff shows only what changed. */
export function pinsText(pins: Pins): string {
  return `${JSON.stringify(sortedKeys(pins), null, 2)}\n`;
}

export function writePins(catalogDir: string, namespace: string, pins: Pins): void {
  writeFileSync(pinsFileOf(catalogDir, namespace), pinsText(pins));
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, item]) => [key, sortedKeys(item)]),
  );
}
