/**
 * What a production deployment must not ship: an upstream URL on a host reserved for documentation
 * or for this machine, a KV namespace id left as the template's placeholder, a malformed account
 * id. Each finding is a sentence naming the var or binding, its value, and what to set instead.
 * The Worker's start-up check applies the URL rule to its tools' URL vars; `npm run tools -- check
 * --env production` applies every rule to wrangler.toml's [env.production] and the catalog's
 * production base URLs.
 */

/** The documentation domains of RFC 2606 / RFC 6761, with their subdomains. */
const DOCUMENTATION_DOMAINS = ["example.com", "example.net", "example.org"];
/** Top-level names reserved never to resolve to a real service (RFC 2606, RFC 6761). */
const RESERVED_TLDS = ["invalid", "test", "example", "localhost"];

/** A Cloudflare account id and a KV namespace id: 32 lowercase hex characters. */
const CLOUDFLARE_ID = /^[0-9a-f]{32}$/;

const within = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/**
 * Why `url` cannot be a production upstream's address, or null when it can. A URL that does not
 * parse is reported as such; a host is judged without a trailing dot and case-blind.
 */
export function placeholderUrlReason(url: string): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return "not a URL";
  }
  const documentation = DOCUMENTATION_DOMAINS.find((domain) => within(host, domain));
  if (documentation) return `a placeholder: ${documentation} is reserved for documentation`;
  const tld = RESERVED_TLDS.find((name) => within(host, name));
  if (tld && tld !== "localhost") return `a placeholder: the top-level name .${tld} never resolves`;
  if (tld || /^127(\.\d{1,3}){3}$/.test(host) || host === "[::1]" || host === "0.0.0.0") {
    return `this machine (${host}), which no deployed Worker reaches`;
  }
  return null;
}

/** Where a finding's fix goes, such as `[env.production.vars] in wrangler.toml`. */
export type PlaceholderSite = string;

/**
 * Every var holding an http(s) URL that no production upstream can have, as a sentence naming
 * the var, its value, why, and where to set the real one.
 */
export function placeholderUrlVars(vars: Record<string, unknown>, site: PlaceholderSite): string[] {
  return Object.entries(vars).flatMap(([name, value]) => {
    if (typeof value !== "string" || !/^https?:\/\//i.test(value.trim())) return [];
    const reason = placeholderUrlReason(value.trim());
    return reason === null
      ? []
      : [`${name} is "${value}", ${reason}; set ${name} in ${site} to the https URL of the real API`];
  });
}

/**
 * METRICS_ACCOUNT_ID, when set, must be an account id: a wrong one makes every metrics read fail.
 * Empty is allowed: events are still recorded and GET /v1/metrics says it cannot read them.
 */
export function metricsAccountProblem(value: unknown, site: PlaceholderSite): string | null {
  if (value === undefined || value === null) return null;
  const text = String(value).trim();
  if (text === "" || CLOUDFLARE_ID.test(text)) return null;
  return `METRICS_ACCOUNT_ID is "${String(value)}", not a Cloudflare account id (32 lowercase hex characters); set METRICS_ACCOUNT_ID in ${site} to the Account ID the dashboard shows, or to "" to leave metrics unread`;
}

/** A KV namespace binding whose id is not a namespace's (such as REPLACE_WITH_OAUTH_KV_NAMESPACE_ID). */
export function kvNamespaceIdProblem(
  binding: string,
  id: unknown,
  environment: string,
  site: PlaceholderSite,
): string | null {
  if (typeof id === "string" && CLOUDFLARE_ID.test(id)) return null;
  return `KV namespace ${binding} has id "${String(id)}", ${
    typeof id === "string" && /REPLACE|TODO|CHANGE|PLACEHOLDER/i.test(id) ? "a placeholder, " : ""
  }not a namespace id (32 lowercase hex characters); create it with \`npx wrangler kv namespace create ${binding} --env ${environment}\` and put the id it prints in ${site}`;
}

/** Where the Worker's own vars are set, for the start-up check's sentences. */
export const PRODUCTION_VARS_SITE = "[env.production.vars] in wrangler.toml";

/**
 * The start-up check's part: a production Worker whose upstream URL vars (`urlVars`, the bindings
 * its tools name) are placeholders refuses to serve. Only those vars are read, so no secret's
 * value can end up in a message. (Its KV namespace id is not visible to the Worker, and a wrong
 * METRICS_ACCOUNT_ID fails only metrics reads, which say so: `npm run tools -- check --env
 * production` refuses both before a deploy, and `wrangler deploy` the KV placeholder.)
 */
export function productionPlaceholderProblems(env: object, urlVars: Iterable<string>): string[] {
  const vars = env as Record<string, unknown>;
  return placeholderUrlVars(
    Object.fromEntries([...new Set(urlVars)].map((name) => [name, vars[name]])),
    PRODUCTION_VARS_SITE,
  );
}
