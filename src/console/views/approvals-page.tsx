/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import type { EnvironmentName } from "../../wire/envelope";
import { LIVE_PERIOD_MS } from "../live-script";
import { Layout } from "./layout";
import { LiveRegion } from "./live-region";
import { PendingList, type PendingListProps } from "./pending-list";

/** The pending list's fragment, which the page's live region reloads. */
export const PENDING_FRAGMENT_PATH = "/console/fragments/pending";

export interface ApprovalsPageProps extends PendingListProps {
  environment: EnvironmentName;
  session: SignedInOperator;
}

/** "Waiting for you": the pending list, kept current in place while the page is open. */
export const ApprovalsPage: FC<ApprovalsPageProps> = ({ environment, session, live, ...list }) => (
  <Layout title="Waiting for you" environment={environment} session={session} section="pending" live={live}>
    <h1>Waiting for you</h1>
    <p class="lede">
      Calls of <strong>{session.tenant}</strong>'s agents that wait for a human decision.{" "}
      {live ? (
        <>
          This list updates itself every {LIVE_PERIOD_MS / 1000} s.{" "}
          <a href="/console?refresh=off">Pause updates</a>
        </>
      ) : (
        <>
          Updates are paused. <a href="/console">Resume updates</a>
        </>
      )}
    </p>
    <LiveRegion source={live ? PENDING_FRAGMENT_PATH : null}>
      <PendingList live={live} {...list} />
    </LiveRegion>
  </Layout>
);
