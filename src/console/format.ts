/** How times and durations read on the console's pages. Pure: `now` is passed in. */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A span like "42 s", "5 min", "3 h 10 min" or "2 d 4 h": precise where it matters, short beyond. */
export function formatSpan(ms: number): string {
  const span = Math.max(0, ms);
  if (span < MINUTE) return `${Math.floor(span / SECOND)} s`;
  if (span < HOUR) return `${Math.floor(span / MINUTE)} min`;
  if (span < DAY) {
    const minutes = Math.floor((span % HOUR) / MINUTE);
    return `${Math.floor(span / HOUR)} h${minutes ? ` ${minutes} min` : ""}`;
  }
  const hours = Math.floor((span % DAY) / HOUR);
  return `${Math.floor(span / DAY)} d${hours ? ` ${hours} h` : ""}`;
}

/** "5 min ago", or "just now" under five seconds. */
export function formatAge(iso: string, now: number): string {
  const age = now - Date.parse(iso);
  return age < 5 * SECOND ? "just now" : `${formatSpan(age)} ago`;
}

/** "in 23 h 59 min", or "expired" once the moment has passed. */
export function formatUntil(iso: string, now: number): string {
  const left = Date.parse(iso) - now;
  return left <= 0 ? "expired" : `in ${formatSpan(left)}`;
}

/** "2026-05-01 12:01:03 UTC": operators in different time zones read the same instant. */
export function formatTimestamp(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** "43 ms", "1.24 s", or "—" when the call has not finished. */
export function formatLatency(ms: number | null): string {
  if (ms === null) return "—";
  return ms < SECOND ? `${Math.round(ms)} ms` : `${(ms / SECOND).toFixed(2)} s`;
}
