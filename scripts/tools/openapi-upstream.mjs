// The upstream of a drafted namespace: its binding, idempotency header and credential, proposed
// from the document's `servers` and `securitySchemes`. The base URL itself lives in wrangler.toml
// (a service binding in sandbox, a var in production), so the draft says where it goes.

/**
 * @param {Record<string, any>} document
 * @param {{ binding: string, report: (location: string, message: string) => void, idempotencyHeaders: Set<string> }} context
 * @returns {{ declaration: Record<string, unknown>, comment: string, review: string[] }}
 */
export function draftUpstream(document, { binding, report, idempotencyHeaders }) {
  const review = [];
  const server = serverOf(document, report, review);
  const credential = credentialOf(document, binding, report);
  review.push(
    `upstream ${binding}: credential ${credential.why}; bind it in wrangler.toml for sandbox and production`,
  );
  const declaration = {
    idempotency_header: [...idempotencyHeaders][0] ?? "Idempotency-Key",
    credential: credential.declaration,
  };
  const comment = [
    ` ${binding}: ${server ? `the API at ${server}` : "the API (the document names no server)"}.`,
    " Bind it in wrangler.toml for each environment: sandbox, a [[env.sandbox.services]] binding",
    ` to the worker serving it; production, a var ${binding} holding its base URL.`,
    ` The credential is ${credential.why}.`,
  ].join("\n");
  return { declaration, comment, review };
}

/** servers[0]'s URL with its variables at their defaults, or null when there is none to use. */
function serverOf(document, report, review) {
  const [first, ...others] = Array.isArray(document.servers) ? document.servers : [];
  if (!first?.url || first.url === "/") {
    review.push("upstream: the document names no server; set the base URL in wrangler.toml by hand");
    return null;
  }
  if (others.length > 0) {
    review.push(`upstream: servers[0] (${first.url}) drafted; ${others.length} other server(s) not used`);
  }
  const url = String(first.url).replace(/\{([^}]+)\}/g, (_, name) => {
    const value = first.variables?.[name]?.default;
    if (value === undefined) report(`servers[0].variables.${name}`, "a server variable without a default");
    return value ?? `{${name}}`;
  });
  if (!/^https?:\/\//.test(url))
    review.push(`upstream: servers[0] is relative (${url}); give the full base URL`);
  return url;
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
