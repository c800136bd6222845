/** @jsxImportSource hono/jsx */
import type { Child, FC } from "hono/jsx";

/**
 * A part of a page that keeps itself current: with a `source`, the console's script replaces its
 * content with that fragment's fresh rendering every few seconds (src/console/live-script.ts); with
 * none (the operator paused updates) it is a plain part of the page.
 */
export const LiveRegion: FC<{ source: string | null; children?: Child }> = ({ source, children }) => (
  <div class="live" data-live={source ?? undefined}>
    {children}
  </div>
);

/** When the content was rendered, in UTC like every time in the console. */
export const LiveStamp: FC<{ now: number; live: boolean }> = ({ now, live }) => {
  const iso = new Date(now).toISOString();
  return (
    <p class="live-stamp">
      {live ? "Live · updated " : "Updated "}
      <time datetime={iso}>{`${iso.slice(11, 19)} UTC`}</time>
    </p>
  );
};
