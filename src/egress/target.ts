import { classifyUrlHost, type HostClass } from "../core/host-class";

/** Why a target is not fetched; said in logs, never to the caller (see guarded-fetch.ts). */
export type TargetRefusal =
  | { reason: "not_https" }
  | { reason: "credentials_in_url" }
  | { reason: "own_host" }
  | { reason: "host"; host_class: HostClass };

/**
 * Whether the proxy may send a request to `url` on someone's behalf: https only, no user or password
 * in the URL, a public name or address (src/core/host-class.ts), and none of the proxy's own
 * hostnames (`ownHosts`: the hostname the request arrived on, the configured public origins), which
 * would turn the fetch into an unauthenticated request to the proxy's own API from the inside.
 */
export function refusedTarget(url: URL, ownHosts: ReadonlySet<string>): TargetRefusal | null {
  if (url.protocol !== "https:") return { reason: "not_https" };
  if (url.username !== "" || url.password !== "") return { reason: "credentials_in_url" };
  // Judged as the parser left it: every IPv4 spelling is dotted decimal by now, and an IPv6 address
  // that carries an IPv4 one is refused whatever that address is.
  const hostClass = classifyUrlHost(url.href);
  if (hostClass !== "public") return { reason: "host", host_class: hostClass };
  if (ownHosts.has(hostKey(url.hostname))) return { reason: "own_host" };
  return null;
}

/** A hostname as compared with the proxy's own: lowercase, without the trailing dot of an absolute name. */
export function hostKey(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, "");
}
