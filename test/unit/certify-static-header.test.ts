import { describe, expect, it } from "vitest";
import type { CertifyTool, CertifyUpstream } from "../../scripts/tools/certify-namespace";
import { CertifyError } from "../../scripts/tools/certify-reach";
import { type Signer, validAuthorization } from "../../scripts/tools/certify-send";
import type { StoredRequest } from "../../src/machine/run-state";

/**
 * A certification sends what the proxy would: an upstream declared with a static header gets that
 * header, or, its secret unset, nothing at all; never the proxy's JWT in its place.
 */

const upstream = {
  name: "WAREHOUSE_API",
  declaration: {
    credential: { kind: "static_header", header: "X-Api-Key", secret: "WAREHOUSE_API_KEY" },
  },
  header: "Idempotency-Key",
} as unknown as CertifyUpstream;
const tool = { declaration: { name: "get_stock_level" } } as unknown as CertifyTool;
const request: StoredRequest = { method: "GET", target: "/stock/W-1", headers: {}, body: null };
const signer = (secrets: Record<string, string | undefined>): Signer => ({
  tenant: "acme",
  run: "run_certify",
  keys: null,
  secrets,
});

describe("certify's credential for a static header", () => {
  it("is the declared header when its secret is set", async () => {
    const sent = await validAuthorization(
      signer({ WAREHOUSE_API_KEY: "k-1" }),
      tool,
      upstream,
      request,
      null,
    );
    expect(sent).toEqual({ header: "X-Api-Key", value: "k-1" });
  });

  it.each([undefined, "", "  "])(
    "is refused, naming the secret, when it is %j, never the JWT",
    async (value) => {
      const attempt = validAuthorization(signer({ WAREHOUSE_API_KEY: value }), tool, upstream, request, null);
      await expect(attempt).rejects.toThrow(CertifyError);
      await expect(attempt).rejects.toThrow(
        /secret WAREHOUSE_API_KEY is not set: the proxy sends WAREHOUSE_API nothing/,
      );
    },
  );
});
