// The requests of a certification, built and signed as the proxy builds and signs a dispatch's:
// the stored request of `buildRequest` (canonical JSON body, the tool's literal headers), the key in
// the upstream's idempotency header, and the credential `execute.ts` would present (a declared static
// header or query key, which needs its secret set, else the proxy's JWT for the tool and this one
// request).

import type { UpstreamSigningKey } from "../../src/config/signing-keys";
import { buildRequest } from "../../src/machine/request";
import type { StoredRequest } from "../../src/machine/run-state";
import { attachCredential } from "../../src/upstream/attach-credential";
import {
  bearer,
  type CredentialRequest,
  credentialExpiry,
  issueUpstreamCredential,
  missingSecret,
  staticAuthorization,
  type UpstreamAuthorization,
} from "../../src/upstream/credential";
import type { Args, CertifyTool, CertifyUpstream } from "./certify-namespace";
import { CertifyError } from "./certify-reach";

/** What one certification signs with, and as whom. */
export interface Signer {
  tenant: string;
  run: string;
  /** The proxy's signing keys for this environment; null when none is at hand (production, unset). */
  keys: UpstreamSigningKey[] | null;
  /** The environment's values of static-header secrets (the process's environment). */
  secrets: Record<string, string | undefined>;
}

/** A probe waits at least this long for an answer, whatever the tool's timeout: it measures effects, not latency. */
const MIN_WAIT_MS = 15_000;

export const waitOf = (tool: CertifyTool) => Math.max(tool.declaration.timeout_ms, MIN_WAIT_MS);

/** A fresh idempotency key: every probe that needs one sends its own. */
export const freshKey = () => `certify_${crypto.randomUUID().replaceAll("-", "")}`;

/** The tool's request for `args` as the proxy stores it, carrying `key` when one is given. */
export function requestOf(
  tool: CertifyTool,
  upstream: CertifyUpstream,
  args: Args,
  key: string | null,
): StoredRequest {
  const request = buildRequest(tool.spec, args, { key: null, callId: `call_certify_${freshKey()}` });
  if (key !== null) request.headers[upstream.header.toLowerCase()] = key;
  return request;
}

/** The one request a credential names: `request` as sent, or with some of its claims replaced. */
export function claimsOf(request: StoredRequest, key: string | null): CredentialRequest {
  return { method: request.method, target: request.target, body: request.body, idempotency_key: key };
}

/** The proxy's JWT for `audience` and `claims`, signed with the first of `keys`. */
export async function signedFor(
  signer: Signer,
  keys: UpstreamSigningKey[],
  audience: string,
  claims: CredentialRequest,
  waitMs: number,
): Promise<UpstreamAuthorization> {
  const now = Date.now();
  const token = await issueUpstreamCredential(
    {
      tenant: signer.tenant,
      run: signer.run,
      tool: audience,
      exp: credentialExpiry(now, waitMs),
      request: claims,
    },
    keys,
    now,
  );
  return bearer(token);
}

/**
 * The declared static key, a header or a query parameter, when its secret is set: what the proxy
 * sends instead of its JWT. Null for an upstream that takes the JWT or nothing, and for an unset
 * secret.
 */
function staticKeyOf(signer: Signer, upstream: CertifyUpstream): UpstreamAuthorization | null {
  const credential = upstream.declaration.credential;
  if (credential.kind !== "static_header" && credential.kind !== "static_query") return null;
  const declared =
    credential.kind === "static_header" ? { ...credential, prefix: credential.prefix ?? "" } : credential;
  return missingSecret(declared, signer.secrets) === null
    ? staticAuthorization(declared, signer.secrets)
    : null;
}

/**
 * The declared static key, else a CertifyError naming its unset secret: as the proxy, which sends
 * such an upstream that key or nothing, never its JWT in its place.
 */
export function requiredStaticKey(signer: Signer, upstream: CertifyUpstream): UpstreamAuthorization {
  const declared = staticKeyOf(signer, upstream);
  if (declared) return declared;
  const { credential } = upstream.declaration;
  const secret = "secret" in credential ? credential.secret : "";
  throw new CertifyError(
    `secret ${secret} is not set: the proxy sends ${upstream.name} nothing without it (a call answers configuration_error); set it in the environment certify runs in`,
  );
}

/** The credential the proxy presents with `request`: none, the static key, or its JWT. */
export async function validAuthorization(
  signer: Signer,
  tool: CertifyTool,
  upstream: CertifyUpstream,
  request: StoredRequest,
  key: string | null,
): Promise<UpstreamAuthorization | null> {
  const credential = upstream.declaration.credential;
  if (credential.kind === "none") return null;
  if (credential.kind === "static_header" || credential.kind === "static_query") {
    return requiredStaticKey(signer, upstream);
  }
  if (!signer.keys) {
    throw new CertifyError(
      "no key to sign the proxy's credential with: set UPSTREAM_SIGNING_KEYS to the environment's signing keys",
    );
  }
  return signedFor(signer, signer.keys, tool.declaration.name, claimsOf(request, key), waitOf(tool));
}

/** A fresh Ed25519 key the proxy never held, under `kid`: what a forger signs with. */
export async function forgedKey(kid: string): Promise<UpstreamSigningKey> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  return { kty: "OKP", crv: "Ed25519", kid, x: jwk.x ?? "", d: jwk.d ?? "" };
}

export interface Answer {
  status: number;
  /** The body as JSON, or null when it is none. */
  body: unknown;
  text: string;
}

/** The first characters of an answer, for a report line. */
export const excerpt = (answer: Answer) => answer.text.replace(/\s+/g, " ").slice(0, 160);

/**
 * Sends `request` to `base` with `authorization` (none when null) and the command's `--header`s.
 * An upstream out of reach, or one that takes longer than `waitMs`, is a CertifyError.
 */
export async function send(
  base: string,
  request: StoredRequest,
  authorization: UpstreamAuthorization | null,
  extraHeaders: Record<string, string>,
  waitMs: number,
): Promise<Answer> {
  const headers = new Headers(extraHeaders);
  for (const [name, value] of Object.entries(request.headers)) headers.set(name, value);
  // The URL a refusal names is the one without a key in its query: the key is added to the sent one.
  const url = `${base}${request.target}`;
  const sent = new URL(url);
  attachCredential(sent, headers, authorization);
  let response: Response;
  try {
    response = await fetch(sent, {
      method: request.method,
      headers,
      ...(request.body === null ? {} : { body: request.body }),
      redirect: "manual",
      signal: AbortSignal.timeout(waitMs),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
    throw new CertifyError(`${request.method} ${url} is out of reach (${String(reason)})`);
  }
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the status says enough, and `text` is kept for the report.
  }
  return { status: response.status, body, text };
}
