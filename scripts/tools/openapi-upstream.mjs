// The upstream of a drafted namespace: its base URL per environment, whether it applies a write once
// per key, and its credential, proposed from the document's `servers`, idempotency-key parameters and
// where it puts credentials (openapi-credentials.mjs). An environment the
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
 * @param {{ credential: import("./openapi-credentials.mjs").CredentialUpstream, report: (location: string, message: string) => void, idempotencyHeaders: Set<string>, writes?: boolean, own?: import("./upstream-hosts.ts").ProxyOrigins }} context
 * @returns {{ declaration: Record<string, unknown>, comment: string, review: string[] }}
 */
export function draftUpstream(
  document,
  { credential: upstream, report, idempotencyHeaders, writes = true, own = LOCAL_PROXY },
) {
  const { binding } = upstream;
  const review = [];
  const base = basesOf(document, binding, report, review, own);
  const credential = credentialOf(upstream);
  review.push(`upstream ${binding}: credential.kind (${credential.why})`);
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
    ` The credential: ${credential.why}.`,
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
 * The credential in the placement the document shows, its kind left to a human behind a marker:
 * only the API's owner knows whether it verifies the proxy's JWT (a SaaS API does not), and a key
 * the document names is set as a Workers secret before a call can succeed.
 *
 * @param {import("./openapi-credentials.mjs").CredentialUpstream} upstream
 */
function credentialOf({ placement, secret }) {
  if (!placement || placement.in === "proxy_jwt") {
    const shown = placement ? `proposed from ${placement.from}` : "the document declares no credential";
    return {
      declaration: {
        kind: `${REVIEW} proxy_jwt proposed (${shown}): keep it only if the API verifies the proxy's JWT (sandbox/API.md); an API with its own key takes static_header { header, secret } or static_query { param, secret }`,
      },
      why: `proxy_jwt proposed, ${shown}`,
    };
  }
  const set = `set the Workers secret ${secret} (npm run tools -- enable lists it for a deploy)`;
  if (placement.in === "query") {
    return {
      declaration: {
        kind: `${REVIEW} static_query proposed from ${placement.from}: the proxy adds the secret ${secret} to each request's query as ${placement.name}; write static_query`,
        param: placement.name,
        secret,
      },
      why: `static_query, the query parameter ${placement.name}, from ${placement.from}; ${set}`,
    };
  }
  // A cookie is a header the proxy writes whole: `Cookie: name=<secret>`.
  const cookie = placement.in === "cookie";
  const header = cookie ? "Cookie" : placement.name;
  const prefix = cookie ? `${placement.name}=` : placement.prefix;
  return {
    declaration: {
      kind: `${REVIEW} static_header proposed from ${placement.from}: the proxy sends the secret ${secret} in ${header}${prefix ? ` after "${prefix}"` : ""}; write static_header`,
      header,
      secret,
      ...(prefix ? { prefix } : {}),
    },
    why: `static_header ${header}${cookie ? ` (the cookie ${placement.name})` : ""}, from ${placement.from}; ${set}`,
  };
}
