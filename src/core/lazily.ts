/**
 * A value built on its first use and kept for the isolate's life. For what module scope would
 * otherwise build when the isolate starts (zod schemas, tables) but a request may never need: the
 * isolate's startup pays nothing, the first use pays once. A build that throws is not kept: the next
 * use builds again (and throws again, for a value that cannot be built).
 */
export function lazily<T>(build: () => T): () => T {
  let built = false;
  let value: T | undefined;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}
