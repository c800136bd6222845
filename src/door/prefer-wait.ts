import type { Problem } from "../wire/envelope";

/** The longest a caller may ask a call to wait for a pending approval's decision (`Prefer: wait=`). */
export const MAX_WAIT_S = 30;

/**
 * `Prefer: wait=<seconds>` (RFC 7240): how long a call that would answer "an approval is pending"
 * may wait for the decision before it answers. Other preferences in the header are ignored, as the
 * RFC asks; a `wait` that is not a whole number of seconds is refused, naming the header, and one
 * above `MAX_WAIT_S` waits that long.
 *
 * @example
 * preferredWaitMs("respond-async, wait=10"); // { ok: true, ms: 10_000 }
 */
export function preferredWaitMs(
  header: string | undefined,
): { ok: true; ms: number } | { ok: false; problems: Problem[] } {
  if (header === undefined) return { ok: true, ms: 0 };
  for (const part of header.split(",")) {
    const [name, value] = part.split("=", 2).map((token) => token.trim());
    if (name?.toLowerCase() !== "wait") continue;
    const seconds = value?.replace(/^"(.*)"$/, "$1");
    if (seconds === undefined || !/^\d{1,6}$/.test(seconds)) {
      return {
        ok: false,
        problems: [
          {
            field: "Prefer",
            reason: `wait=${seconds ?? ""} is not a whole number of seconds`,
            hint: `Send Prefer: wait=<seconds>, at most ${MAX_WAIT_S}.`,
          },
        ],
      };
    }
    return { ok: true, ms: Math.min(Number(seconds), MAX_WAIT_S) * 1_000 };
  }
  return { ok: true, ms: 0 };
}
