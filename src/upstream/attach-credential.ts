import type { UpstreamAuthorization } from "./credential";

/**
 * Adds a credential to one attempt's URL and headers: a query parameter's value is set on the URL
 * of this attempt alone, so neither the target stored under the call's key nor anything that
 * records or logs it holds the secret. Null adds nothing (a server that takes no credential).
 */
export function attachCredential(
  url: URL,
  headers: Headers,
  authorization: UpstreamAuthorization | null,
): void {
  if (!authorization) return;
  if ("query" in authorization) url.searchParams.set(authorization.query, authorization.value);
  else headers.set(authorization.header, authorization.value);
}
