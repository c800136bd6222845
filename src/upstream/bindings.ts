import type { Catalog } from "../catalog/catalog";
import type { EnvironmentName } from "../wire/envelope";

/**
 * Where a tool's calls go. In `sandbox` a binding is a service binding to the sandbox worker; in
 * `production` it is the URL of the real API (a plain var). The proxy does not know or care which:
 * dry run is a credential and binding choice made in wrangler.toml, never a branch in code.
 */
export interface Upstream {
  fetch(request: Request): Promise<Response>;
}

function isFetcher(value: unknown): value is Fetcher {
  return (
    typeof value === "object" && value !== null && typeof (value as { fetch?: unknown }).fetch === "function"
  );
}

/** Service bindings ignore the host; this one makes logs and traces readable. */
const SERVICE_ORIGIN = "https://upstream.internal";

/** Where a tool's upstream is: its binding's name, and the base URLs its declaration gives. */
export interface UpstreamRef {
  binding: string;
  base?: Partial<Record<EnvironmentName, string>>;
}

/**
 * This environment's way to a tool's upstream: the declared base URL for the environment, else the
 * binding of that name in wrangler.toml (a service binding, or a URL var); null when neither exists.
 */
export function resolveUpstream(
  env: object,
  upstream: UpstreamRef,
  environment: EnvironmentName,
): Upstream | null {
  const declared = upstream.base?.[environment];
  if (declared) return byUrl(declared);
  const value = (env as Record<string, unknown>)[upstream.binding];
  if (isFetcher(value)) {
    return { fetch: (request) => value.fetch(request) };
  }
  if (typeof value === "string" && /^https?:\/\//.test(value)) return byUrl(value);
  return null;
}

function byUrl(url: string): Upstream {
  const base = url.replace(/\/+$/, "");
  return {
    fetch: (request) => {
      const target = new URL(request.url);
      return fetch(new Request(`${base}${target.pathname}${target.search}`, request));
    },
  };
}

/** The URL a binding is sent; the origin is rewritten by the binding that sends it. */
export function upstreamUrl(target: string): string {
  return new URL(target, SERVICE_ORIGIN).toString();
}

/** Every tool whose binding is absent from this environment, as readable sentences. */
export function missingBindings(catalog: Catalog, env: object, environment: EnvironmentName): string[] {
  return catalog
    .all()
    .flatMap((tool) => (tool.upstream === null ? [] : [{ name: tool.name, upstream: tool.upstream }]))
    .filter((tool) => resolveUpstream(env, tool.upstream, environment) === null)
    .map(
      (tool) =>
        `tool "${tool.name}" needs binding "${tool.upstream.binding}", which this environment does not define (a service binding or an https URL var in wrangler.toml)`,
    );
}

/**
 * Every secret a declared `static_header` credential names that this environment lacks. Checked
 * at start in production only: in the sandbox a call of such a tool answers `configuration_error`
 * naming the secret, and nothing is sent (`unsentWithoutSecret`, src/upstream/authorize.ts), never
 * another credential.
 */
export function missingUpstreamSecrets(catalog: Catalog, env: object): string[] {
  const values = env as Record<string, unknown>;
  const missing = new Map<string, string>();
  for (const tool of catalog.all()) {
    if (!tool.upstream) continue;
    const secret = tool.upstream.credential?.secret;
    const value = secret === undefined ? undefined : values[secret];
    if (secret !== undefined && (typeof value !== "string" || value.trim() === "") && !missing.has(secret)) {
      missing.set(secret, tool.upstream.binding);
    }
  }
  return [...missing].map(
    ([secret, binding]) =>
      `secret ${secret} is not set; upstream ${binding} sends it as its API key (set it with \`npx wrangler secret put ${secret} --env production\`)`,
  );
}
