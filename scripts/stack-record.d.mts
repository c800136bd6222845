/** Types of scripts/stack-record.mjs: which dev registry the local stack on a port registered in. */
export function recordStack(
  root: string,
  port: number | string,
  registryPath: string | undefined,
): () => void;
export function recordedRegistry(root: string, url: string): string | null | undefined;
