import { createLocalJWKSet, decodeJwt, exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { UPSTREAM_CREDENTIAL_ALG, type UpstreamSigningKey } from "../../src/config/signing-keys";
import {
  CREDENTIAL_MARGIN_MS,
  credentialExpiry,
  issueUpstreamCredential,
  verifyUpstreamCredential,
} from "../../src/upstream/credential";

/** A throwaway Ed25519 signing key, as the proxy's configuration holds one. */
async function signingKey(): Promise<UpstreamSigningKey> {
  const { privateKey } = await generateKeyPair(UPSTREAM_CREDENTIAL_ALG, {
    crv: "Ed25519",
    extractable: true,
  });
  const { x, d } = await exportJWK(privateKey);
  if (!x || !d) throw new Error("generated key has no x or d");
  return { kty: "OKP", crv: "Ed25519", alg: UPSTREAM_CREDENTIAL_ALG, kid: "unit", x, d };
}

const LOOKUP = { method: "GET", target: "/orders/A1001", body: null, idempotency_key: null };

describe("an upstream credential's lifetime", () => {
  it.each([
    [1_000, 0],
    [2_500, 0],
    [2_500, 999],
    [8_000, 1],
    [8_000, 500],
  ])(
    "outlives a %i ms request by at least a second and by the margin at most (clock at +%i ms)",
    (timeout, offset) => {
      const now = 1_767_225_600_000 + offset;
      const exp = credentialExpiry(now, timeout);
      expect(exp % 1_000, "a JWT's exp holds whole seconds").toBe(0);
      expect(exp - now).toBeGreaterThanOrEqual(timeout + 1_000);
      expect(exp - now).toBeLessThanOrEqual(timeout + CREDENTIAL_MARGIN_MS);
    },
  );

  it("verifies until its exp and is refused as expired from then on, by the clock the verifier is given", async () => {
    const key = await signingKey();
    const issuedAt = 1_767_225_600_000;
    const exp = credentialExpiry(issuedAt, 2_500);
    const token = await issueUpstreamCredential(
      { tenant: "acme", run: "run_1", tool: "lookup_order", exp, request: LOOKUP },
      [key],
      issuedAt,
    );
    expect(decodeJwt(token)).toMatchObject({ iat: issuedAt / 1_000, exp: exp / 1_000 });
    const keys = createLocalJWKSet({
      keys: [{ kty: key.kty, crv: key.crv, x: key.x, kid: key.kid, alg: key.alg }],
    });
    const at = (now: number) =>
      verifyUpstreamCredential(token, keys, { tool: "lookup_order", request: LOOKUP, now });
    expect(await at(exp - 1_000)).toMatchObject({ ok: true });
    expect(await at(exp)).toEqual({ ok: false, reason: "expired" });
  });
});
