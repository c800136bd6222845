import type { MiddlewareHandler } from "hono";
import { plural } from "./plural";

/**
 * What an operator reads is what was written. Agents and upstreams write text the console shows
 * (ticket summaries, notes, email drafts, OAuth client names); a bidi override inside it makes a
 * browser draw the letters in another order (`refund ‮001$ ‬` reads as a different amount), and
 * zero-width, tag and control characters hide words. The console's own templates contain none of
 * these characters, so every one in a page came from data: each is replaced by a visible escape
 * such as `⟨U+202E⟩`, never interpreted, and the page says how many it shows.
 *
 * Done once, on the HTML as it leaves (pages, live fragments and the consent page alike), so no
 * view can forget it. The escape is plain text, valid inside elements and attribute values alike.
 * Line breaks, tabs and emoji's zero-width joiner are left alone: they lay out text and join pictures.
 */
/** Control (Cc) and format (Cf) characters: bidi controls, zero-width spaces, soft hyphens, tags, BOM. */
const HIDDEN = /(?![\t\n\r\u200D])[\p{Cc}\p{Cf}]/gu;

/** The text with every hidden character replaced by its visible escape, and how many there were. */
export function revealInvisibles(text: string): { text: string; count: number } {
  let count = 0;
  const revealed = text.replace(HIDDEN, (char) => {
    count += 1;
    return `⟨U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}⟩`;
  });
  return { text: revealed, count };
}

/** The notice a page with escapes opens with, right inside its `<main>`. */
function notice(count: number): string {
  const what = plural(count, "hidden character");
  return `<div class="notice notice-error" role="alert"><p><strong>This page shows ${what} as ⟨U+…⟩.</strong> Text from an agent or an upstream contained direction overrides, zero-width or control characters that would have changed what you read. Read the escaped text before you decide.</p></div>`;
}

/** Rewrites every HTML answer of the routes it is mounted on; other answers pass untouched. */
export const revealInvisibleCharacters: MiddlewareHandler = async (c, next) => {
  await next();
  if (!c.res.headers.get("content-type")?.startsWith("text/html")) return;
  const { text, count } = revealInvisibles(await c.res.text());
  if (count === 0) {
    c.res = new Response(text, c.res);
    return;
  }
  const flagged = text.replace(/(<main\b[^>]*>)/, `$1${notice(count)}`);
  c.res = new Response(flagged, c.res);
};
