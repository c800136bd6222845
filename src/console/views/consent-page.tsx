/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import { ACCESS_TOKEN_TTL_S, REFRESH_TOKEN_TTL_S } from "../../oauth/lifetimes";
import type { ProfileChoice } from "../../oauth/profiles";
import type { EnvironmentName } from "../../wire/envelope";
import { plural } from "../plural";
import { Layout, Notice } from "./layout";

/** What the page shows about the client; every string came from the client's own registration. */
export interface ConsentClient {
  clientId: string;
  /** The registered name, or the client id when it gave none: self-asserted, never verified. */
  clientName: string;
  redirectUri: string;
  redirectHost: string;
  redirectIsLoopback: boolean;
}

export interface ConsentPageProps {
  environment: EnvironmentName;
  session: SignedInOperator;
  client: ConsentClient;
  profiles: ProfileChoice[];
  /** The provider's one-use handle of this consent, bound to this browser by a cookie. */
  handle: string;
}

/** A token lifetime in words: "15 minutes", "1 hour", "30 days". */
function lifetime(seconds: number): string {
  if (seconds < 3600) return plural(Math.round(seconds / 60), "minute");
  const hours = seconds / 3600;
  return hours >= 24 && hours % 24 === 0 ? plural(hours / 24, "day") : plural(Math.round(hours), "hour");
}

const ProfileLimits: FC<{ profile: ProfileChoice }> = ({ profile }) => (
  <span class="meta">
    namespace <code>{profile.namespace}</code>; per session at most {plural(profile.limits.max_calls, "call")}
    , {plural(profile.limits.max_writes, "write")},{" "}
    {plural(profile.limits.max_destructive, "destructive call")}, {profile.limits.deadline_s} s
  </span>
);

/**
 * The OAuth consent page: which application asks, where its tokens will go, and which of the
 * tenant's agent profiles it may act as. Hono's JSX escapes every value, so a client's name cannot
 * put markup on this page.
 */
export const ConsentPage: FC<ConsentPageProps> = ({ environment, session, client, profiles, handle }) => (
  <Layout title="Authorize an MCP client" environment={environment} session={session}>
    <h1>Allow an MCP client to use {session.tenant}'s tools?</h1>
    <p class="lede">
      The application below asks for an access token to this proxy's MCP endpoint. It gets the tools and
      limits of the agent profile you choose, exactly like an agent key of that profile: every session opens a
      run, and destructive calls still wait for an operator. You can revoke it at any time under{" "}
      <a href="/console/oauth">OAuth clients</a>.
    </p>
    <div class="card">
      <dl class="facts">
        <dt>Application</dt>
        <dd>
          <strong>{client.clientName}</strong>{" "}
          <span class="meta">(the name it registered with; not verified)</span>
        </dd>
        <dt>Client id</dt>
        <dd>
          <code>{client.clientId}</code>
        </dd>
        <dt>Tokens go to</dt>
        <dd>
          <strong>{client.redirectHost}</strong> <code>{client.redirectUri}</code>
        </dd>
        <dt>Lasts</dt>
        <dd class="grant-lifetime">
          {lifetime(REFRESH_TOKEN_TTL_S)}: each access token is good for {lifetime(ACCESS_TOKEN_TTL_S)}, and
          the application renews it with its refresh token until the grant ends,{" "}
          {lifetime(REFRESH_TOKEN_TTL_S)} after you allow it. Then an operator must allow it again.
        </dd>
      </dl>
    </div>
    {client.redirectIsLoopback ? (
      <Notice kind="info">
        <p>
          This sends access to an application on the computer this browser runs on. Continue only if you just
          started signing in from it: any program there could be listening, whatever name it claims.
        </p>
      </Notice>
    ) : null}
    <form method="post" action="/authorize" class="panel">
      <input type="hidden" name="csrf" value={session.csrf} />
      <input type="hidden" name="handle" value={handle} />
      {profiles.length === 0 ? (
        <Notice kind="error">
          <p>
            {session.tenant} has no agent profiles, so there is nothing to grant. Add one under{" "}
            <code>agent_profiles</code> in the tenant's configuration, then start again from the application.
          </p>
        </Notice>
      ) : (
        <fieldset class="choices">
          <legend>Agent profile</legend>
          {profiles.map((profile, index) => (
            <label class="choice">
              <input type="radio" name="profile" value={profile.name} required checked={index === 0} />{" "}
              <strong>{profile.name}</strong> <ProfileLimits profile={profile} />
            </label>
          ))}
        </fieldset>
      )}
      <div class="actions">
        {profiles.length > 0 ? (
          <button type="submit" name="decision" value="approve" class="primary">
            Allow
          </button>
        ) : null}
        <button type="submit" name="decision" value="deny" class="secondary" formnovalidate>
          Deny
        </button>
      </div>
    </form>
  </Layout>
);
