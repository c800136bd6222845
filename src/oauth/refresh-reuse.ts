import { sha256Hex } from "../core/digest";
import type { Env } from "../env";
import { oauthApi } from "./provider";

/**
 * Refresh tokens are rotated on every use, and a token used twice revokes its grant (OAuth 2.0
 * Security BCP, RFC 9700 §4.14.2): if an attacker and the client both hold one, whichever refreshes
 * second reveals the theft, and neither keeps access.
 *
 * The provider library (1.2.3) keeps the previous refresh token valid beside the new one, a grace
 * for a client whose refresh answer was lost, and has no option to turn that off. So the token
 * endpoint looks first: it reads the grant the library stored (`grant:<user>:<grant>` in OAUTH_KV,
 * whose `previousRefreshTokenId` is the SHA-256 hex of the token last exchanged) and, when the
 * presented token is that one, revokes the grant through the library's own helper. The cost is the
 * grace: a client whose refresh answer was lost must be authorized again.
 */
export async function refuseReusedRefreshToken(request: Request, env: Env): Promise<Response | null> {
  const form = new URLSearchParams(await request.clone().text());
  const token = form.get("refresh_token");
  if (form.get("grant_type") !== "refresh_token" || !token) return null;
  const [userId, grantId, secret] = token.split(":");
  if (!userId || !grantId || !secret) return null;
  const grant = await env.OAUTH_KV.get<{ previousRefreshTokenId?: string }>(`grant:${userId}:${grantId}`, {
    type: "json",
  });
  if (!grant?.previousRefreshTokenId || grant.previousRefreshTokenId !== (await sha256Hex(token)))
    return null;
  await oauthApi(env, new URL(request.url).origin)?.revokeGrant(grantId, userId);
  console.warn(`oauth: a refresh token of grant ${grantId} was used twice; the grant is revoked`);
  return new Response(
    JSON.stringify({
      error: "invalid_grant",
      error_description:
        "This refresh token was already exchanged. Its grant is revoked in case it was stolen: have an operator authorize the client again.",
    }),
    { status: 400, headers: { "content-type": "application/json", "cache-control": "no-store" } },
  );
}
