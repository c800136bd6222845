/** @jsxImportSource hono/jsx */
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { environmentOf } from "../config/environment";
import { listTenantGrants, revokeTenantClient, revokeTenantGrant } from "../oauth/grants";
import { oauthApi } from "../oauth/provider";
import type { ConsoleEnv } from "./console-env";
import { messagePage } from "./guards";
import { GrantsPage } from "./views/grants-page";

const GRANTS_PATH = "/console/oauth";

/** The provider's helpers for this request's origin, or a page saying OAuth is not offered here. */
function withOAuthApi(c: Context<ConsoleEnv>, act: (api: OAuthHelpers) => Promise<Response>) {
  const api = oauthApi(c.env, new URL(c.req.url).origin);
  if (!api) {
    return messagePage(
      c,
      404,
      "OAuth not offered here",
      "OAuth for MCP clients needs an https address (or http on a loopback address); open the console there.",
    );
  }
  return act(api);
}

function notFound(c: Context<ConsoleEnv>, what: "grant" | "client") {
  return messagePage(
    c,
    404,
    what === "grant" ? "Grant not found" : "Client not found",
    `Your tenant has no such ${what}. It may have been revoked already, or belong to another tenant.`,
    { next: { href: GRANTS_PATH, label: "Back to OAuth clients" } },
  );
}

export function showGrants(c: Context<ConsoleEnv>) {
  return withOAuthApi(c, async (api) => {
    const session = c.get("session");
    const { grants, clients } = await listTenantGrants(api, session.tenant);
    const revoked = c.req.query("revoked");
    const count = Number(c.req.query("count") ?? "0");
    return c.html(
      <GrantsPage
        environment={environmentOf(c.env)}
        session={session}
        grants={grants}
        clients={clients}
        now={Date.now()}
        revoked={
          revoked === "grant"
            ? { kind: "grant" }
            : revoked === "client"
              ? { kind: "client", count: Number.isSafeInteger(count) ? count : 0 }
              : null
        }
      />,
    );
  });
}

/** Revokes one grant of the operator's tenant; redirects (PRG) so a reload never posts again. */
export function revokeGrant(c: Context<ConsoleEnv>) {
  return withOAuthApi(c, async (api) => {
    const revoked = await revokeTenantGrant(api, c.get("session").tenant, c.req.param("id") ?? "");
    if (!revoked) return notFound(c, "grant");
    return c.redirect(`${GRANTS_PATH}?revoked=grant`, 303);
  });
}

/** Revokes every grant of the operator's tenant that one client holds. */
export function disconnectClient(c: Context<ConsoleEnv>) {
  return withOAuthApi(c, async (api) => {
    const count = await revokeTenantClient(api, c.get("session").tenant, c.req.param("id") ?? "");
    if (count === 0) return notFound(c, "client");
    return c.redirect(`${GRANTS_PATH}?revoked=client&count=${count}`, 303);
  });
}
