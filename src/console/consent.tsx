/** @jsxImportSource hono/jsx */
import {
  AuthorizationError,
  type AuthRequest,
  CimdFetchError,
  type OAuthHelpers,
} from "@cloudflare/workers-oauth-provider";
import { type Context, Hono } from "hono";
import type { OAuthGrantProps } from "../auth/agent-keys";
import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import { metadataDocumentRefusal } from "../oauth/metadata-document";
import { profileChoices } from "../oauth/profiles";
import { type GrantMetadata, grantOwnerOf, oauthApi } from "../oauth/provider";
import type { ConsoleEnv } from "./console-env";
import { currentSession, limitForm, messagePage, requireCsrf, requireSession } from "./guards";
import { signInPathReturningTo } from "./return-path";
import { revealInvisibleCharacters } from "./reveal-invisibles";
import { consentSecurityHeaders } from "./security-headers";
import { ConsentPage } from "./views/consent-page";

/**
 * `GET/POST /authorize`, the authorization endpoint the OAuth provider leaves to us: a signed-in
 * operator of the console sees which client asks and where its tokens go, picks one of the
 * tenant's agent profiles, and allows or denies. The grant then belongs to the operator's tenant
 * and admits the client as that profile (props `{ tenant, profile }`, read on /mcp).
 */
export const consent = new Hono<ConsoleEnv>();
consent.use(consentSecurityHeaders);
consent.use(revealInvisibleCharacters);

type ConsentContext = Context<ConsoleEnv>;

/** The library's refusals, said so an operator knows what to do; its own text otherwise (escaped). */
const REFUSALS: Record<string, string> = {
  "client_id is required": "The request names no application (client_id is missing).",
  "Invalid client_id":
    "The application is not registered here: its client_id is unknown. It may have been registered with another proxy, or its registration expired; let it register again.",
  "Invalid redirect URI":
    "The address the request would send the tokens to is not one the application registered, so the request was refused. A genuine application always uses its registered address.",
};

/** Where a consent's redirect will lead, for the page's `form-action` (null for a scheme without an origin). */
function redirectOrigin(redirectUri: string): string | null {
  try {
    const origin = new URL(redirectUri).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}

function apiFor(c: ConsentContext): OAuthHelpers | null {
  return oauthApi(c.env, new URL(c.req.url).origin);
}

function notOffered(c: ConsentContext) {
  return messagePage(
    c,
    404,
    "OAuth not offered here",
    "OAuth for MCP clients needs an https address (or http on a loopback address).",
  );
}

/**
 * A request the provider refuses. Once it has checked the client and its exact redirect URI, the
 * error goes back to the client (RFC 6749 4.1.2.1); before that, redirecting could hand an
 * attacker's address a response, so the refusal is shown here.
 */
function refuseRequest(c: ConsentContext, error: AuthorizationError) {
  if (error.redirectTo) return c.redirect(error.redirectTo, 302);
  return messagePage(c, 400, "Authorization refused", REFUSALS[error.description] ?? error.description);
}

consent.get("/", async (c) => {
  const session = await currentSession(c);
  const url = new URL(c.req.url);
  // A new tab opened by a desktop client carries the console's cookie; one that a web client's
  // redirect opened does not (SameSite=Strict), and the operator signs in once more.
  if (!session) return c.redirect(signInPathReturningTo(`${url.pathname}${url.search}`), 303);
  c.set("session", session);
  const api = apiFor(c);
  if (!api) return notOffered(c);

  let request: AuthRequest;
  try {
    request = await api.parseAuthRequest(c.req.raw);
  } catch (error) {
    if (error instanceof AuthorizationError) return refuseRequest(c, error);
    throw error;
  }
  const details = await api.describeConsent(request);
  const started = await api.beginConsent(request);
  const target = redirectOrigin(details.redirectUri);
  if (target) c.set("formTargets", [target]);
  // The provider's cookie binds the handle to this browser; its other headers are ours already.
  for (const cookie of started.headers.getAll("Set-Cookie")) c.header("Set-Cookie", cookie, { append: true });
  return c.html(
    <ConsentPage
      environment={environmentOf(c.env)}
      session={session}
      client={{
        clientId: details.clientId,
        clientName: details.clientName,
        redirectUri: details.redirectUri,
        redirectHost: details.redirectHost,
        redirectIsLoopback: details.redirectIsLoopback,
      }}
      profiles={profileChoices(loadConfig(c.env), session.tenant)}
      handle={started.handle}
    />,
  );
});

/** A consent form whose handle is spent, expired or from another browser: start again from the client. */
function staleConsent(c: ConsentContext, error: AuthorizationError) {
  return messagePage(
    c,
    409,
    "Authorization expired",
    `${error.description}: start the sign-in again from the application.`,
  );
}

consent.post("/", requireSession, limitForm, requireCsrf, async (c) => {
  const api = apiFor(c);
  if (!api) return notOffered(c);
  const session = c.get("session");
  const form = await c.req.parseBody();
  const handle = typeof form.handle === "string" ? form.handle : "";
  try {
    if (form.decision !== "approve") {
      const denied = await api.denyConsent(c.req.raw, handle);
      return new Response(null, { status: 302, headers: denied.headers });
    }
    const profile = typeof form.profile === "string" ? form.profile : "";
    if (!profileChoices(loadConfig(c.env), session.tenant).some((choice) => choice.name === profile)) {
      // The handle is not spent yet, so going back to the page and choosing again still works.
      return messagePage(c, 400, "Choose a profile", `Choose one of ${session.tenant}'s agent profiles.`);
    }
    // No scopes are granted: the profile decides what the client's tokens may do.
    const approved = await api.approveConsent(c.req.raw, handle, { scope: [] });
    const props: OAuthGrantProps = { tenant: session.tenant, profile };
    const metadata: GrantMetadata = { tenant: session.tenant, profile, operator: session.operator };
    const { redirectTo } = await api.completeAuthorization({
      request: approved.request,
      userId: grantOwnerOf(session.tenant),
      metadata,
      scope: approved.request.scope,
      props,
    });
    approved.headers.set("Location", redirectTo);
    return new Response(null, { status: 302, headers: approved.headers });
  } catch (error) {
    if (error instanceof AuthorizationError) return staleConsent(c, error);
    throw error;
  }
});

consent.onError((error, c) => {
  // Any step that looks the client up (the page, the answer to it) may find its metadata document
  // gone bad: the client's fault, said as such, not a failure of the proxy.
  if (error instanceof CimdFetchError) {
    return messagePage(c, 400, "Authorization refused", metadataDocumentRefusal(error));
  }
  console.error("consent page failed", error);
  return messagePage(
    c,
    500,
    "Something went wrong",
    "The authorization could not be completed. Start it again from the application; if it keeps failing, the proxy's log says why.",
    { anonymous: true },
  );
});
