// Which base URLs an importer may propose and a production deploy may ship: one on the public
// internet, or, for the sandbox only, one on this machine (a local test server). A base on a
// private network, a link (cloud metadata), nowhere, an address written to hide which, or the
// proxy's own origin would turn the proxy into a way to reach what it guards, so the importers
// leave it to a human behind a draft marker and `check --env production` refuses it.
import { classifyUrlHost, hostClassReason } from "../../src/core/host-class";

/** The origins the proxy itself answers on: host patterns (`*` for any labels) and `npm start`'s port. */
export interface ProxyOrigins {
  hosts: readonly string[];
  /** The port the local proxy listens on (scripts/start.mjs): a loopback base there is the proxy. */
  localPort: string;
}

/** `npm start`'s proxy only: what an importer knows without reading wrangler.toml. */
export const LOCAL_PROXY: ProxyOrigins = { hosts: [], localPort: "8787" };

/** What wrangler reads of one environment that says where its Worker answers. */
export interface WorkerSite {
  name?: string | undefined;
  workers_dev?: boolean | undefined;
  routes?: readonly (string | { pattern: string })[] | undefined;
}

/** The proxy's origins from its environments: each Worker's workers.dev name and its routes' hosts. */
export function proxyOriginsOf(sites: readonly WorkerSite[]): ProxyOrigins {
  const hosts = sites.flatMap((site) => [
    ...(site.name && site.workers_dev !== false ? [`${site.name}.*.workers.dev`] : []),
    ...(site.routes ?? []).map(
      (route) => (typeof route === "string" ? route : route.pattern).split("/")[0]?.toLowerCase() ?? "",
    ),
  ]);
  return { hosts: [...new Set(hosts.filter(Boolean))], localPort: LOCAL_PROXY.localPort };
}

/** The origins of the proxy that `root`'s wrangler.toml deploys, sandbox and production. */
export async function proxyOriginsOfProject(root: string): Promise<ProxyOrigins> {
  const { unstable_readConfig: readConfig } = await import("wrangler");
  const sites = ["sandbox", "production"].map((env) =>
    readConfig({ config: `${root}/wrangler.toml`, env }, { hideWarnings: true }),
  );
  return proxyOriginsOf(sites);
}

const hostPattern = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[a-z0-9.-]*")}$`, "i");

/** Whether `url` is one of the proxy's own origins. */
function isProxyOrigin(url: URL, own: ProxyOrigins): boolean {
  const host = url.hostname.replace(/\.$/, "");
  if (own.hosts.some((pattern) => hostPattern(pattern).test(host))) return true;
  return classifyUrlHost(url.href) === "loopback" && url.port === own.localPort;
}

/**
 * Why `url` cannot be `environment`'s base without a human's decision, or null when it can: a
 * public host, or a loopback one for the sandbox (not the proxy's own port).
 */
export function unsafeBaseReason(
  url: string,
  environment: "sandbox" | "production",
  own: ProxyOrigins,
): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null; // not a URL: the importer says so, and check refuses it by its schema
  }
  if (isProxyOrigin(parsed, own)) return "this proxy's own address: the proxy would call itself";
  const hostClass = classifyUrlHost(url);
  if (hostClass === "public") return null;
  if (hostClass === "loopback" && environment === "sandbox") return null;
  return hostClassReason(hostClass);
}
