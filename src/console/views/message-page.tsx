/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import type { EnvironmentName } from "../../wire/envelope";
import { Layout, Notice } from "./layout";

export interface MessagePageProps {
  environment: EnvironmentName;
  session: SignedInOperator | null;
  title: string;
  message: string;
  /** Where the operator can go next. */
  next?: { href: string; label: string };
}

/** Refusals and failures (403, 404, 413, 500) as a readable page: a sentence, never a stack. */
export const MessagePage: FC<MessagePageProps> = ({ environment, session, title, message, next }) => (
  <Layout title={title} environment={environment} session={session}>
    <h1>{title}</h1>
    <Notice kind="error">
      <p>{message}</p>
    </Notice>
    <p>
      <a href={next?.href ?? "/console"}>{next?.label ?? "Back to pending approvals"}</a>
    </p>
  </Layout>
);
