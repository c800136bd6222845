// Where a document puts its credentials, wherever that is: a security scheme of any kind, or a
// parameter (query, header, cookie, path) whose name or description marks a secret. A credential
// is never a tool's input: it becomes its upstream's credential, in the placement the API reads it
// from, its value a Workers secret the deploy provides. An API whose operations take different
// credentials gets an upstream per credential (one base, one credential each); an operation that
// needs two at once, or one in its path, is not drafted, and says why.
import { looksLikeCredential } from "./credential-names.ts";

/**
 * @typedef {{ location: string, message: string }} Problem
 * @typedef {{ in: "header" | "query" | "cookie" | "proxy_jwt", name?: string, prefix?: string, from: string }} Placement
 *   where the API reads its credential; `from` says what in the document shows it
 * @typedef {{ path: string, method: string, operation: Record<string, any>, parameters: { parameter: Record<string, any>, location: string }[] }} Operation
 * @typedef {{ binding: string, placement: Placement | null, secret: string }} CredentialUpstream
 * @typedef {{ binding: string, credentialParameters: Set<Record<string, any>> }} OperationCredential
 */

const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

/** Where a credential goes: header names compare without case, query and cookie names with it. */
const placeOf = (placement) =>
  placement.in === "proxy_jwt"
    ? "proxy_jwt"
    : `${placement.in}:${placement.in === "header" ? placement.name?.toLowerCase() : placement.name}`;

/** One credential: where it goes and what precedes it (basic and bearer both go in `Authorization`). */
const keyOf = (placement) => `${placeOf(placement)}:${placement.prefix ?? ""}`;

/** What one security scheme asks for, or null (reported) when the proxy cannot send it. */
function schemePlacement(name, scheme, report) {
  const from = `components.securitySchemes.${name}`;
  if (!isObject(scheme)) return null;
  if (scheme.type === "apiKey" && ["header", "query", "cookie"].includes(scheme.in) && scheme.name) {
    return {
      in: scheme.in,
      name: String(scheme.name),
      from: `${from} (an API key in ${scheme.in} ${scheme.name})`,
    };
  }
  if (scheme.type === "http") {
    const kind = String(scheme.scheme ?? "").toLowerCase();
    if (kind === "bearer" && /jwt/i.test(scheme.bearerFormat ?? "")) {
      return { in: "proxy_jwt", from: `${from} (a bearer JWT)` };
    }
    const prefix = kind === "basic" ? "Basic " : kind === "bearer" ? "Bearer " : `${scheme.scheme} `;
    return { in: "header", name: "Authorization", prefix, from: `${from} (http ${scheme.scheme})` };
  }
  if (scheme.type === "oauth2" || scheme.type === "openIdConnect") {
    // The proxy runs no OAuth flow: a token obtained beforehand, kept as a secret, is sent as a bearer.
    return {
      in: "header",
      name: "Authorization",
      prefix: "Bearer ",
      from: `${from} (${scheme.type}: a token obtained beforehand, sent as a bearer; the proxy refreshes none)`,
    };
  }
  report(from, `${scheme.type}${scheme.in ? ` in ${scheme.in}` : ""} credentials are not supported`);
  return null;
}

/** The security requirement an operation is under: its own, else the document's. */
function requirementOf(document, operation) {
  const requirements = Array.isArray(operation.security) ? operation.security : document.security;
  return Array.isArray(requirements) ? requirements : null;
}

/** Whether a parameter carries a credential: the scheme's own, or one its name or description marks. */
function isCredentialParameter(parameter, placements) {
  if (!isObject(parameter) || typeof parameter.name !== "string") return false;
  const own = placements.some(
    (placement) =>
      placement.in !== "proxy_jwt" &&
      placeOf(placement) === placeOf({ in: parameter.in, name: parameter.name }),
  );
  if (own) return true;
  const type = parameter.schema?.type;
  if (type === "boolean") return false;
  return looksLikeCredential(parameter.name, parameter.description);
}

/**
 * The credentials of the operations to draft: the upstreams they need, in document order, and per
 * operation its upstream and the parameters that are its credential (left out of its input). An
 * operation that takes a credential in its path, or two at once, is reported and gets none.
 *
 * @param {Record<string, any>} document
 * @param {Operation[]} operations
 * @param {string} namespace
 * @param {(location: string, message: string) => void} report
 */
export function credentialPlan(document, operations, namespace, report) {
  const schemes = isObject(document.components?.securitySchemes) ? document.components.securitySchemes : {};
  const placementOfScheme = new Map();
  const placementOf = (name) => {
    if (!placementOfScheme.has(name))
      placementOfScheme.set(name, schemePlacement(name, schemes[name], report));
    return placementOfScheme.get(name);
  };
  const anyRequirement = operations.some((op) => requirementOf(document, op.operation) !== null);
  /** @type {Map<string, Placement>} */
  const found = new Map();
  /** @type {Map<Operation, { placement: Placement | null, credentialParameters: Set<Record<string, any>> } | null>} */
  const byOperation = new Map();
  /** Each operation's problems, reported when it is drafted, so they read in document order. */
  const problemsOf = new Map();
  for (const op of operations) {
    const problems = [];
    problemsOf.set(op, problems);
    const tell = (location, message) => problems.push([location, message]);
    const at = `paths.${op.path}.${op.method}`;
    const operationId = op.operation.operationId ?? `${op.method} ${op.path}`;
    // The first alternative of the requirement the proxy can send (every scheme of it known); a
    // document that requires nothing anywhere but declares schemes means its first one.
    const requirement = requirementOf(document, op.operation);
    const alternatives =
      requirement ??
      (anyRequirement
        ? []
        : Object.keys(schemes)
            .slice(0, 1)
            .map((name) => ({ [name]: [] })));
    const chosen = alternatives.find(
      (alternative) =>
        isObject(alternative) &&
        Object.keys(alternative).every((name) => name in schemes && placementOf(name)),
    );
    const placements = Object.keys(chosen ?? {}).map(placementOf);
    const credentialParameters = new Set();
    let drafted = true;
    for (const { parameter, location } of op.parameters) {
      if (!isCredentialParameter(parameter, placements)) continue;
      credentialParameters.add(parameter);
      if (parameter.in === "path") {
        tell(
          `${location} (path ${parameter.name})`,
          `a credential in the path: a secret in a URL path is written to every access log, trace and cache on its way, and the proxy sends its credentials only in a header or the query; operation ${operationId} not drafted`,
        );
        drafted = false;
        continue;
      }
      const placement = {
        in: parameter.in,
        name: parameter.name,
        from: `${location} (${parameter.in} ${parameter.name}${typeof parameter.description === "string" ? `: ${JSON.stringify(parameter.description)}` : ""})`,
      };
      if (!placements.some((known) => placeOf(known) === placeOf(placement))) placements.push(placement);
    }
    if (placements.length > 1) {
      const names = placements.map((placement) =>
        placement.in === "proxy_jwt" ? "a bearer JWT" : `${placement.in} ${placement.name}`,
      );
      tell(
        at,
        `takes ${placements.length} credentials at once (${names.join(", ")}); an upstream sends one; operation ${operationId} not drafted`,
      );
      drafted = false;
    }
    const [placement = null] = placements;
    if (drafted && placement && !found.has(keyOf(placement))) found.set(keyOf(placement), placement);
    byOperation.set(op, drafted ? { placement, credentialParameters } : null);
  }

  const base = `${namespace.toUpperCase()}_API`;
  /** @type {CredentialUpstream[]} */
  const upstreams = [];
  const bindings = new Map();
  for (const [key, placement] of found) {
    let binding =
      upstreams.length === 0 ? base : `${namespace.toUpperCase()}_${upperSnake(placement.name ?? "jwt")}_API`;
    while (upstreams.some((upstream) => upstream.binding === binding)) binding = `${binding}_2`;
    upstreams.push({ binding, placement, secret: `${binding}_KEY` });
    bindings.set(key, binding);
  }
  if (upstreams.length === 0) upstreams.push({ binding: base, placement: null, secret: `${base}_KEY` });
  return {
    upstreams,
    /**
     * @param {Operation} op
     * @returns {OperationCredential | null} null: the operation is not drafted (reported)
     */
    of(op) {
      for (const [location, message] of problemsOf.get(op) ?? []) report(location, message);
      const entry = byOperation.get(op);
      if (!entry) return null;
      // An operation that takes no credential goes through the first upstream, which sends its own.
      const binding = entry.placement ? bindings.get(keyOf(entry.placement)) : upstreams[0]?.binding;
      return { binding: binding ?? base, credentialParameters: entry.credentialParameters };
    },
  };
}

/** `user_token` → `USER_TOKEN`; `X-Api-Key` → `X_API_KEY`. */
function upperSnake(name) {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toUpperCase();
}
