// The upstream of a drafted namespace: its base URL per environment, whether it applies a write once
// per key, and its credential, proposed from the document's `servers`, idempotency-key parameters and
// `securitySchemes`. An environment the
// servers do not name is bound in wrangler.toml instead (a service binding, or a URL var). A server
// no public upstream has (upstream-hosts.ts) is left to a human behind a draft marker.

import { classifyUrlHost } from "../../src/core/host-class.ts";
import { REVIEW } from "./openapi-operations.mjs";
import { LOCAL_PROXY, unsafeBaseReason } from "./upstream-hosts.ts";

/** A server a document marks as not production: by its description or its host. */
const SANDBOX_SERVER =
  /\b(sandbox|staging|test|testing|local|development|dev)\b|\/\/(localhost|127\.0\.0\.1)[:/]/i;
/** A host no fetch reaches: a stand-in for a service binding (the sandbox's own APIs). */
const INTERNAL_HOST = /^https?:\/\/[^/]*\.internal(?:[:/]|$)/i;

/**
 * @param {Record<string, any>} document
 * @param {{ binding: string, report: (location: string, message: string) => void, idempotencyHeaders: Set<string>, writes?: boolean, own?: import("./upstream-hosts.ts").ProxyOrigins }} context
 * @returns {{ declaration: Record<string, unknown>, comment: string, review: string[] }}
 */
export function draftUpstream(
  document,
  { binding, report, idempotencyHeaders, writes = true, own = LOCAL_PROXY },
) {
  const review = [];
  const base = basesOf(document, binding, report, review, own);
  const credential = credentialOf(document, binding, report);
  review.push(`upstream ${binding}: credential ${credential.why}`);
  const idempotency = idempotencyOf(binding, idempotencyHeaders, writes, review);
  const declaration = {
    ...(Object.keys(base).length > 0 ? { base } : {}),
    ...(idempotency ? { idempotency } : {}),
    credential: credential.declaration,
  };
  const where = (environment) =>
    base[environment]
      ? ` ${environment}: ${base[environment]}`
      : ` ${environment}: not in the document; give base.${environment}, or bind ${binding} in [env.${environment}] of wrangler.toml.`;
  const comment = [
    ` ${binding}, from the document's servers:`,
    where("sandbox"),
    where("production"),
    ` The credential is ${credential.why}.`,
  ].join("\n");
  return { declaration, comment, review };
}

/**
 * Whether the API applies a write once per key. A document that declares an idempotency-key header
 * says so; one that does not leaves the question to a human, because a resend in doubt to an API
 * that ignores keys makes a second effect. A draft of reads only leaves it out: nothing rests on it.
 */
function idempotencyOf(binding, idempotencyHeaders, writes, review) {
  const [header] = idempotencyHeaders;
  if (header) {
    review.push(
      `upstream ${binding}: idempotency proposed from the document's ${header} header; certify it with npm run tools -- certify`,
    );
    return { header, honoured: true };
  }
  if (!writes) return null;
  review.push(`upstream ${binding}: idempotency.honoured (the document declares no idempotency header)`);
  return {
    header: "Idempotency-Key",
    honoured: `${REVIEW} the document declares no idempotency header: does the API apply a write once per Idempotency-Key? true, or false so a write in doubt is settled by a read (declare each write's settle)`,
  };
}

/** The document's servers as base URLs per environment: the first sandbox-like one and the first other. */
function basesOf(document, binding, report, review, own) {
  const servers = Array.isArray(document.servers) ? document.servers : [];
  /** @type {{ sandbox?: string, production?: string }} */
  const base = {};
  for (const [index, server] of servers.entries()) {
    if (!server?.url || server.url === "/") continue;
    const url = urlOf(server, index, report);
    const environment = SANDBOX_SERVER.test(`${server.description ?? ""} ${url}`) ? "sandbox" : "production";
    if (base[environment]) {
      review.push(`upstream: servers[${index}] (${url}) not used; ${environment} is servers' first one`);
    } else if (INTERNAL_HOST.test(url) && classifyUrlHost(url) === "private") {
      review.push(
        `upstream: servers[${index}] (${url}) is no address a fetch reaches; bind ${binding} in wrangler.toml`,
      );
    } else if (unsafeBaseReason(url, environment, own)) {
      const reason = unsafeBaseReason(url, environment, own);
      base[environment] =
        `${REVIEW} servers[${index}] (${url}) is ${reason}; give base.${environment} the upstream's own https URL, or bind ${binding} in wrangler.toml`;
      review.push(`upstream: servers[${index}] (${url}) is ${reason}; not adopted as base.${environment}`);
    } else if (!/^https?:\/\//.test(url)) {
      review.push(`upstream: servers[${index}] is relative (${url}); give base.${environment} as a full URL`);
    } else if (environment === "production" && !url.startsWith("https://")) {
      review.push(`upstream: servers[${index}] (${url}) is plain http; production is reached over https`);
    } else {
      base[environment] = url.replace(/\/+$/, "");
    }
  }
  for (const environment of ["sandbox", "production"]) {
    if (!base[environment]) {
      review.push(
        `upstream: no ${environment} server in the document; give base.${environment} or bind ${binding} in wrangler.toml`,
      );
    }
  }
  return base;
}

/** A server's URL with its variables at their defaults. */
function urlOf(server, index, report) {
  return String(server.url).replace(/\{([^}]+)\}/g, (_, name) => {
    const value = server.variables?.[name]?.default;
    if (value === undefined)
      report(`servers[${index}].variables.${name}`, "a server variable without a default");
    return value ?? `{${name}}`;
  });
}

/**
 * The credential the scheme the document requires suggests: a bearer JWT is the proxy's own
 * per-request credential; an API key or a plain bearer token is a static header from a secret.
 */
function credentialOf(document, binding, report) {
  const schemes = document.components?.securitySchemes ?? {};
  const required = [document.security, ...operationSecurity(document)]
    .flat()
    .flatMap((requirement) => Object.keys(requirement ?? {}));
  const name = required.find((candidate) => candidate in schemes) ?? Object.keys(schemes)[0];
  const proxyJwt = { kind: "proxy_jwt" };
  if (!name) return { declaration: proxyJwt, why: "proposed: the document declares no security scheme" };
  const scheme = schemes[name];
  const from = `proposed from components.securitySchemes.${name}`;
  const secret = `${binding}_KEY`;
  if (
    scheme.type === "http" &&
    scheme.scheme?.toLowerCase() === "bearer" &&
    /jwt/i.test(scheme.bearerFormat ?? "")
  ) {
    return { declaration: proxyJwt, why: `${from} (a bearer JWT: the proxy's per-request credential)` };
  }
  if (scheme.type === "http" && ["bearer", "basic"].includes(scheme.scheme?.toLowerCase())) {
    const prefix = scheme.scheme.toLowerCase() === "bearer" ? "Bearer " : "Basic ";
    return {
      declaration: { kind: "static_header", header: "Authorization", secret, prefix },
      why: `${from} (http ${scheme.scheme}); set the Workers secret ${secret}`,
    };
  }
  if (scheme.type === "apiKey" && scheme.in === "header") {
    return {
      declaration: { kind: "static_header", header: scheme.name, secret },
      why: `${from} (an API key in ${scheme.name}); set the Workers secret ${secret}`,
    };
  }
  report(
    `components.securitySchemes.${name}`,
    `${scheme.type}${scheme.in ? ` in ${scheme.in}` : ""} credentials are not supported; proxy_jwt proposed instead`,
  );
  return { declaration: proxyJwt, why: `proposed: ${name} cannot be declared` };
}

function operationSecurity(document) {
  return Object.values(document.paths ?? {}).flatMap((item) =>
    Object.values(item ?? {}).flatMap((operation) => operation?.security ?? []),
  );
}
