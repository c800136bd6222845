/** Types of scripts/stack-record.mjs: which dev registry the local stack on a port registered in. */
export function recordStack(
  root: string,
  port: number | string,
  registryPath: string | undefined,
): () => void;
export function recordedRegistry(root: string, url: string): string | null | undefined;
export function stackRegistry(
  root: string,
  port: number | string,
  env?: Record<string, string | undefined>,
): string;
