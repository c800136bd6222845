/**
 * The `application_type` of a dynamic registration (OpenID Connect Dynamic Client Registration 1.0
 * §2), which MCP 2026-07-28 requires clients to send. It decides where a client's authorization
 * codes may go:
 *
 * - `web`: a browser application on a remote host. Its
 *   redirect URIs are https on a host other than this machine; a loopback or custom-scheme address
 *   would hand its codes to whatever local program listens there.
 * - `native`: desktop, mobile and CLI clients, and web apps served on localhost. Loopback http
 *   (any port, RFC 8252 §7.3), a private-use scheme (§7.1) or a claimed https URL (§7.2).
 *
 * Absent, no rule of this file applies (OIDC would default to `web`): the clients dynamic
 * registration is kept for are those of the 2025 revisions, which register a loopback callback
 * without the field, and refusing them would end the registration they still rely on.
 *
 * The provider library does not read the field; it holds every client to "https, or http on a
 * loopback host" and refuses dangerous schemes, which still applies after this rule.
 */

const APPLICATION_TYPES = ["web", "native"] as const;
type ApplicationType = (typeof APPLICATION_TYPES)[number];

/** A registration the rule refuses, as RFC 7591 §3.2.2 error codes. */
export interface ApplicationTypeProblem {
  error: "invalid_client_metadata" | "invalid_redirect_uri";
  description: string;
}

function isApplicationType(value: unknown): value is ApplicationType {
  return APPLICATION_TYPES.some((type) => type === value);
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

function parsedUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** Why a web client may not use `uri`, or null when it may. */
function webRefusal(uri: URL): string | null {
  if (uri.protocol !== "https:") return `uses ${uri.protocol.slice(0, -1)}, not https`;
  if (isLoopbackHost(uri.hostname)) return `is on this machine (${uri.hostname})`;
  return null;
}

/** Why a native client may not use `uri`, or null when it may. */
function nativeRefusal(uri: URL): string | null {
  if (uri.protocol === "http:" && !isLoopbackHost(uri.hostname)) {
    return "uses http on a host other than loopback (localhost, 127.0.0.1, [::1])";
  }
  return null;
}

/**
 * What is wrong with a registration's `application_type` or its redirect URIs for that type; null
 * when nothing is. URIs that do not parse are left to the provider, which refuses them itself.
 */
export function applicationTypeProblem(metadata: Record<string, unknown>): ApplicationTypeProblem | null {
  if (metadata.application_type === undefined) return null;
  const declared = metadata.application_type;
  if (!isApplicationType(declared)) {
    return {
      error: "invalid_client_metadata",
      description: `application_type: ${JSON.stringify(declared)}; it is "web" or "native".`,
    };
  }
  const uris = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];
  for (const [index, value] of uris.entries()) {
    const uri = typeof value === "string" ? parsedUrl(value) : null;
    if (!uri) continue;
    const refusal = declared === "web" ? webRefusal(uri) : nativeRefusal(uri);
    if (!refusal) continue;
    const advice =
      declared === "web"
        ? 'A web client (application_type "web") uses https on a remote host; a desktop, CLI or localhost client registers with application_type "native".'
        : "A native client uses loopback http, a private-use scheme or https.";
    return {
      error: "invalid_redirect_uri",
      description: `redirect_uris[${index}] ${refusal}. ${advice}`,
    };
  }
  return null;
}
