// How a remote tool's live definition differs from the one a human reviewed, in words a reviewer
// reads: the description old and new, each schema path added, removed or changed, each annotation
// that flipped. Pure: `check --remote` and `pin` print it.

import type { PinnedDefinition } from "../../src/catalog/pin";
import { canonicalJson } from "../../src/core/canonical-json";
import type { Pins } from "./mcp-pins";
import { pinDigest, pinnedDefinition } from "./mcp-pins";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const shown = (value: unknown) => (value === undefined ? "(none)" : canonicalJson(value));

/** One line per difference, at its path in the definition (`inputSchema.properties.body.maxLength`). */
export function definitionChanges(reviewed: PinnedDefinition, live: PinnedDefinition): string[] {
  const lines: string[] = [];
  const before = pinnedDefinition(reviewed);
  const after = pinnedDefinition(live);
  if ((before.description ?? "") !== (after.description ?? "")) {
    lines.push(`description was: ${JSON.stringify(before.description ?? "")}`);
    lines.push(`            now: ${JSON.stringify(after.description ?? "")}`);
  }
  if (before.name !== after.name) lines.push(`name: ${before.name} → ${after.name}`);
  for (const part of ["inputSchema", "outputSchema", "annotations"] as const) {
    walk(before[part], after[part], part, lines);
  }
  return lines;
}

function walk(before: unknown, after: unknown, path: string, lines: string[]): void {
  if (isRecord(before) && isRecord(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const at = `${path}.${key}`;
      if (!(key in after)) lines.push(`${at}: removed (was ${shown(before[key])})`);
      else if (!(key in before)) lines.push(`${at}: added (${shown(after[key])})`);
      else walk(before[key], after[key], at, lines);
    }
    return;
  }
  if (before === undefined && after !== undefined) lines.push(`${path}: added (${shown(after)})`);
  else if (after === undefined && before !== undefined) lines.push(`${path}: removed (was ${shown(before)})`);
  else if (shown(before) !== shown(after)) lines.push(`${path}: ${shown(before)} → ${shown(after)}`);
}

/** A declared remote tool: our name, the server's, and the pin the declaration holds. */
export interface DeclaredRemote {
  name: string;
  remote: string;
  pin: string;
}

export type RemoteVerdict =
  | { kind: "unchanged"; tool: DeclaredRemote }
  | { kind: "changed"; tool: DeclaredRemote; live: PinnedDefinition; changes: string[] }
  | { kind: "vanished"; tool: DeclaredRemote };

/**
 * Each declared tool against the server's listing: unchanged when the live definition's digest is
 * the declaration's pin (what the proxy itself compares), changed otherwise (with the differences
 * from the reviewed definition in the pins file), vanished when the server no longer lists it.
 */
export function compareRemote(
  declared: readonly DeclaredRemote[],
  reviewed: Pins,
  live: readonly PinnedDefinition[],
): { verdicts: RemoteVerdict[]; undeclared: string[] } {
  const verdicts = declared.map((tool): RemoteVerdict => {
    const current = live.find((candidate) => candidate.name === tool.remote);
    if (!current) return { kind: "vanished", tool };
    if (pinDigest(current) === tool.pin) return { kind: "unchanged", tool };
    const before = reviewed[tool.remote];
    const changes = before
      ? definitionChanges(before, current)
      : [`no reviewed definition of ${tool.remote} in the pins file to compare with`];
    if (changes.length === 0) changes.push("the pin is not the digest of the reviewed definition");
    return { kind: "changed", tool, live: pinnedDefinition(current), changes };
  });
  const names = new Set(declared.map((tool) => tool.remote));
  return { verdicts, undeclared: live.map((tool) => tool.name).filter((name) => !names.has(name)) };
}

/** The verdicts as `check --remote` and `pin` print them. */
export function verdictLines({ verdicts, undeclared }: ReturnType<typeof compareRemote>): string[] {
  const width = Math.max(0, ...verdicts.map(({ tool }) => tool.name.length));
  const lines: string[] = [];
  for (const verdict of verdicts) {
    const { name, remote } = verdict.tool;
    const head = `  ${name.padEnd(width)}  `;
    const from = remote === name ? "" : ` (the server's ${remote})`;
    switch (verdict.kind) {
      case "unchanged":
        lines.push(`${head}unchanged${from}`);
        break;
      case "changed":
        lines.push(`${head}changed${from}`);
        for (const change of verdict.changes) lines.push(`      ${change}`);
        break;
      case "vanished":
        lines.push(
          `${head}vanished: the server no longer lists ${remote} (a renamed tool is a vanished one plus an undeclared one)`,
        );
        break;
    }
  }
  for (const name of undeclared)
    lines.push(`  ${name.padEnd(width)}  undeclared: listed by the server, declared by no tool`);
  return lines;
}
