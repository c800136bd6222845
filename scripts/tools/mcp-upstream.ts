// The upstream of a namespace drafted from a remote MCP server: base and path from the URL it was
// listed at, the credential proposed from the headers the import sent (never their values), and
// whether the server honours the idempotency key left for a human to answer.
import { IDEMPOTENCY_META_KEY } from "../../src/catalog/declaration";
import type { Declaration, DraftOptions } from "./mcp-draft";
import { REVIEW } from "./openapi-operations.mjs";

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** The upstream: base and path from the URL, credential from the headers given, idempotency to review. */
export function draftUpstream(
  { namespace, url, headers }: DraftOptions,
  binding: string,
): { declaration: Declaration; comment: string; review: string[] } {
  const endpoint = new URL(url);
  const origin = `${endpoint.protocol}//${endpoint.host}`;
  const review: string[] = [];
  const base: Record<string, string> = {};
  if (LOOPBACK.test(endpoint.hostname)) {
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
