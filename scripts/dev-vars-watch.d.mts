/** Types of scripts/dev-vars-watch.mjs, for the tests that import it. */
import type { ChildProcess } from "node:child_process";

export function watchDevVars(folders: string[], onChange: () => void, quietMs?: number): () => void;
export function superviseProcess(
  start: () => ChildProcess,
  onExit: (code: number | null, signal: NodeJS.Signals | null) => void,
  options?: { pollMs?: number; graceMs?: number },
): { restart(): void; kill(signal: NodeJS.Signals): void; readonly pid: number | undefined };
