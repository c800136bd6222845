/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";

/**
 * A long id (a run's 36 characters, a call's) shown short: the stylesheet cuts it to its first
 * characters with an ellipsis instead of wrapping it over lines, while the whole id stays the
 * element's text, so selecting it copies all of it, and its title shows it on hover.
 */
export const ShortId: FC<{ id: string }> = ({ id }) => (
  <code class="short-id" title={id}>
    {id}
  </code>
);
