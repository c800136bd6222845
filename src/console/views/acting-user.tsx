/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { ApprovalUser } from "../../wire/run-user";

/**
 * Whom a call acts for, as an operator reads it: the display name the identity provider gave, with
 * the subject beside it (two users may share a name, never a subject).
 */
export const ActingUser: FC<{ user: ApprovalUser }> = ({ user }) =>
  user.name ? (
    <span class="acting-user">
      {user.name} (<code>{user.sub}</code>)
    </span>
  ) : (
    <span class="acting-user">
      <code>{user.sub}</code>
    </span>
  );
