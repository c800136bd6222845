/** Types of scripts/tools/enable.mjs, for the tests that import it. */
export class EnableError extends Error {}
export function enableNamespace(
  root: string,
  namespace: string,
  options: { tenant: string; environments?: string[] },
): string[];
export function runEnable(root: string, args: string[]): number;
