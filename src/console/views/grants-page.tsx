/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import type { TenantClient, TenantGrant } from "../../oauth/grants";
import type { EnvironmentName } from "../../wire/envelope";
import { formatAge, formatTimestamp, formatUntil } from "../format";
import { plural } from "../plural";
import { Layout, Notice } from "./layout";

export interface GrantsPageProps {
  environment: EnvironmentName;
  session: SignedInOperator;
  grants: TenantGrant[];
  clients: TenantClient[];
  now: number;
  /** What the last revocation did, shown once after its redirect. */
  revoked?: { kind: "grant" } | { kind: "client"; count: number } | null;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

const RevokeButton: FC<{ action: string; csrf: string; label: string; detail: string }> = ({
  action,
  csrf,
  label,
  detail,
}) => (
  <form method="post" action={action}>
    <input type="hidden" name="csrf" value={csrf} />
    <button type="submit" class="reject">
      {label}
      <span class="visually-hidden"> {detail}</span>
    </button>
  </form>
);

const clientLabel = (name: string | null, clientId: string) => name ?? clientId;

/**
 * The tenant's OAuth grants (one per consent an operator gave) and the MCP clients holding them,
 * with a way to cut each off. A revoked grant's tokens stop working on the next request.
 */
export const GrantsPage: FC<GrantsPageProps> = ({ environment, session, grants, clients, now, revoked }) => (
  <Layout title="OAuth clients" environment={environment} session={session} section="oauth">
    <h1>OAuth clients</h1>
    <p class="lede">
      MCP clients that an operator of <strong>{session.tenant}</strong> allowed to act as one of its agent
      profiles. Names are what each client registered with, not verified.
    </p>
    {revoked?.kind === "grant" ? (
      <Notice kind="ok">
        <p>The grant is revoked: its tokens no longer work.</p>
      </Notice>
    ) : null}
    {revoked?.kind === "client" ? (
      <Notice kind="ok">
        <p>The client is disconnected: {plural(revoked.count, "grant")} revoked.</p>
      </Notice>
    ) : null}

    <h2>Grants</h2>
    {grants.length === 0 ? (
      <p class="card empty">No client holds a grant of {session.tenant}.</p>
    ) : (
      <table>
        <caption>{plural(grants.length, "grant")}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Client</th>
            <th scope="col">Agent profile</th>
            <th scope="col">Approved</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span class="visually-hidden">Revoke</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {grants.map((grant) => (
            <tr>
              <th scope="row">
                {clientLabel(grant.clientName, grant.clientId)}
                <p class="meta">
                  <code class="run-id">{grant.clientId}</code>
                  {grant.redirectUri ? (
                    <>
                      {" "}
                      → <code class="run-id">{grant.redirectUri}</code>
                    </>
                  ) : null}
                </p>
              </th>
              <td>
                <code>{grant.profile ?? "—"}</code>
              </td>
              <td>
                <time datetime={iso(grant.createdAt)} title={formatTimestamp(iso(grant.createdAt))}>
                  {formatAge(iso(grant.createdAt), now)}
                </time>
                {grant.operator ? (
                  <p class="meta">
                    by <code>{grant.operator}</code>
                  </p>
                ) : null}
              </td>
              <td>
                {grant.expiresAt === null ? (
                  <span class="meta">code not yet redeemed</span>
                ) : (
                  <time datetime={iso(grant.expiresAt)} title={formatTimestamp(iso(grant.expiresAt))}>
                    {formatUntil(iso(grant.expiresAt), now)}
                  </time>
                )}
              </td>
              <td>
                <RevokeButton
                  action={`/console/oauth/grants/${encodeURIComponent(grant.id)}/revoke`}
                  csrf={session.csrf}
                  label="Revoke"
                  detail={`the grant of ${clientLabel(grant.clientName, grant.clientId)}`}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}

    <h2>Clients</h2>
    {clients.length === 0 ? (
      <p class="card empty">No client is connected to {session.tenant}.</p>
    ) : (
      <table>
        <caption>Clients holding grants of {session.tenant}</caption>
        <thead>
          <tr>
            <th scope="col">Client</th>
            <th scope="col">Redirect URIs</th>
            <th scope="col">Grants</th>
            <th scope="col">
              <span class="visually-hidden">Disconnect</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {clients.map((client) => (
            <tr>
              <th scope="row">
                {clientLabel(client.clientName, client.clientId)}
                <p class="meta">
                  <code class="run-id">{client.clientId}</code>
                  {client.registeredAt === null ? null : (
                    <> registered {formatAge(iso(client.registeredAt), now)}</>
                  )}
                </p>
              </th>
              <td>
                {client.redirectUris.map((uri) => (
                  <code class="run-id">{uri} </code>
                ))}
              </td>
              <td>{client.grants}</td>
              <td>
                <RevokeButton
                  action={`/console/oauth/clients/${encodeURIComponent(client.clientId)}/revoke`}
                  csrf={session.csrf}
                  label="Disconnect"
                  detail={clientLabel(client.clientName, client.clientId)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <p class="meta">
      Disconnecting revokes every grant of {session.tenant} the client holds. Its registration stays, because
      other tenants may use the same client; an unused registration is forgotten after 30 days.
    </p>
  </Layout>
);
