// The upstream of a namespace drafted from a remote MCP server: base and path from the URL it was
// listed at, the credential proposed from the headers the import sent (never their values), and
// whether the server honours the idempotency key left for a human to answer. A URL no public
// server has (upstream-hosts.ts) is left to a human behind a draft marker, never adopted as a base.
import { IDEMPOTENCY_META_KEY } from "../../src/catalog/declaration";
import { classifyUrlHost } from "../../src/core/host-class";
import type { Declaration, DraftOptions } from "./mcp-draft";
import { REVIEW } from "./openapi-operations.mjs";
import { LOCAL_PROXY, unsafeBaseReason } from "./upstream-hosts";

/** The upstream: base and path from the URL, credential from the headers given, idempotency to review. */
export function draftUpstream(
  { namespace, url, headers, own = LOCAL_PROXY }: DraftOptions,
  binding: string,
): { declaration: Declaration; comment: string; review: string[] } {
  const endpoint = new URL(url);
  const origin = `${endpoint.protocol}//${endpoint.host}`;
  const review: string[] = [];
  const base: Record<string, string> = {};
  const loopback = classifyUrlHost(url) === "loopback";
  const environment = !loopback && endpoint.protocol === "https:" ? "production" : "sandbox";
  const unsafe = unsafeBaseReason(url, environment, own);
  if (unsafe) {
    base[environment] =
      `${REVIEW} ${origin} is ${unsafe}; give base.${environment} the server's own URL, or bind ${binding} in wrangler.toml`;
    review.push(`upstream ${binding}: ${origin} is ${unsafe}; not adopted as base.${environment}`);
  } else if (loopback) {
    base.sandbox = origin;
    review.push(
      `upstream ${binding}: base.sandbox is ${origin}, a loopback address; the sandbox may bind ${binding} by name in wrangler.toml instead`,
    );
  } else if (endpoint.protocol === "https:") {
    base.production = origin;
  } else {
    base.sandbox = origin;
    review.push(
      `upstream ${binding}: ${origin} is plain http, so only the sandbox's; production is reached over https`,
    );
  }
  for (const environment of ["sandbox", "production"]) {
    if (!base[environment]) {
      review.push(
        `upstream ${binding}: no ${environment} URL; give base.${environment}, or bind ${binding} in [env.${environment}] of wrangler.toml`,
      );
    }
  }
  const credential = credentialOf(namespace, binding, headers);
  review.push(
    `upstream ${binding}: credential ${credential.why}`,
    `upstream ${binding}: idempotency.honoured`,
  );
  const declaration: Declaration = {
    kind: "mcp",
    base,
    path: endpoint.pathname === "" ? "/" : endpoint.pathname,
    protocol: "auto",
    credential: credential.declaration,
    idempotency: {
      carriers: ["meta", "header"],
      honoured: `${REVIEW} does the server apply a write once per key? true or false`,
    },
  };
  const comment = [
    ` ${binding}, the MCP server at ${url}, imported by npm run tools -- import mcp.`,
    ` The credential is ${credential.why}.`,
    ` The derived idempotency key goes in _meta["${IDEMPOTENCY_META_KEY}"] and the Idempotency-Key header;`,
    " honoured: false means a write whose outcome is unknown is never sent again (a read settles it).",
  ].join("\n");
  return { declaration, comment, review };
}

function credentialOf(
  namespace: string,
  binding: string,
  headers: Record<string, string>,
): { declaration: Declaration; why: string } {
  const [first, ...others] = Object.entries(headers);
  if (!first) {
    return {
      declaration: { kind: "proxy_jwt", audience: namespace },
      why: `proposed: the proxy's per-request JWT for audience ${namespace} (the import sent no --header); the server must verify it`,
    };
  }
  const [header, value] = first;
  const secret = `${binding}_KEY`;
  const prefix = /^(Bearer|Basic|Token) /i.exec(value)?.[0];
  const ignored = others.length > 0 ? `; ${others.map(([name]) => name).join(", ")} not declared` : "";
  return {
    declaration: { kind: "static_header", header, secret, ...(prefix ? { prefix } : {}) },
    why: `proposed from --header ${header} (its value is not written); set the Workers secret ${secret}${ignored}`,
  };
}
