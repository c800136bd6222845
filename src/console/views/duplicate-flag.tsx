/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";

/**
 * The warning on an approval another run of the tenant asked for with exactly the same destructive
 * call (the directory's `duplicates` count): on the pending list and in history alike.
 */
export const DuplicateFlag: FC<{ duplicates: number }> = ({ duplicates }) =>
  duplicates > 0 ? (
    <p class="duplicate-flag">
      ⚠ Possible duplicate: {duplicates === 1 ? "another run" : `${duplicates} other runs`} asked for exactly
      this
    </p>
  ) : null;
