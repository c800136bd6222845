/**
 * Waiting for an event instead of for the wall clock: `check` is asked again every few milliseconds
 * until it finds what the test waits for, so a slow machine only makes the wait longer, never the
 * assertion after it wrong. The limit is a ceiling for a test that would otherwise hang.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  limitMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether `promise` has settled by now: a pending request is still pending after this. */
export async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol("pending");
  const first = await Promise.race([promise.then(() => true), Promise.resolve(pending)]);
  return first !== pending;
}
