import { describe, expect, it } from "vitest";
import {
  type CertificationRecord,
  CertificationRecordSchema,
  certificationOf,
  upstreamDigest,
} from "../../src/catalog/certification";

/**
 * The certification record's pure rules: the digest that binds it to the declarations it was
 * measured against, and what it says of an upstream now.
 */

const refund = {
  name: "issue_refund",
  request: { upstream: "PAYMENTS_API", method: "POST", path: "/refunds" },
};
const lookup = {
  name: "lookup_order",
  request: { upstream: "ORDERS_API", method: "GET", path: "/orders/{id}" },
};
const list = { name: "list_refunds", request: { upstream: "PAYMENTS_API", method: "GET", path: "/refunds" } };
const file = {
  upstreams: {
    PAYMENTS_API: { credential: { kind: "proxy_jwt" } },
    ORDERS_API: { credential: { kind: "proxy_jwt" } },
  },
  tools: [refund, lookup, list],
};

describe("upstreamDigest", () => {
  it("is sha256: and 64 hex digits, the same whatever the order of tools or keys", async () => {
    const digest = await upstreamDigest(file, "PAYMENTS_API");
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const reordered = {
      tools: [
        list,
        { request: { path: "/refunds", method: "POST", upstream: "PAYMENTS_API" }, name: "issue_refund" },
      ],
      upstreams: { PAYMENTS_API: { credential: { kind: "proxy_jwt" } } },
    };
    expect(await upstreamDigest(reordered, "PAYMENTS_API")).toBe(digest);
  });

  it("changes with the upstream or one of its tools, never with another upstream's", async () => {
    const digest = await upstreamDigest(file, "PAYMENTS_API");
    const otherTool = { ...file, tools: [refund, { ...lookup, version: "2" }, list] };
    expect(await upstreamDigest(otherTool, "PAYMENTS_API")).toBe(digest);
    const editedTool = { ...file, tools: [{ ...refund, timeout_ms: 9000 }, lookup, list] };
    expect(await upstreamDigest(editedTool, "PAYMENTS_API")).not.toBe(digest);
    const editedUpstream = {
      ...file,
      upstreams: { ...file.upstreams, PAYMENTS_API: { credential: { kind: "none" } } },
    };
    expect(await upstreamDigest(editedUpstream, "PAYMENTS_API")).not.toBe(digest);
  });
});

const probe = (probe: string, result: "pass" | "fail" | "skipped") => ({
  tool: "issue_refund",
  probe,
  result,
  detail: `${probe} ${result}`,
});

function recordOf(digest: string, probes: ReturnType<typeof probe>[]): CertificationRecord {
  return CertificationRecordSchema.parse({
    format: 1,
    namespace: "support",
    environment: "sandbox",
    certified_at: "2026-11-02T10:00:00.000Z",
    upstreams: {
      PAYMENTS_API: {
        digest,
        verdict: probes.some((entry) => entry.result === "fail") ? "fail" : "pass",
        probes,
      },
    },
  });
}

describe("certificationOf", () => {
  const digest = `sha256:${"a".repeat(64)}`;
  const passing = [
    probe("key_reuse_same_body", "pass"),
    probe("postcondition_read", "pass"),
    probe("key_reuse_other_body", "pass"),
    probe("no_credential", "pass"),
    probe("forged_credential", "pass"),
    probe("credential_for_other_request", "pass"),
  ];

  it("is none without a record, or for an upstream it does not name", () => {
    expect(certificationOf(undefined, "PAYMENTS_API", digest)).toEqual({
      status: "none",
      key_reuse: null,
      credential: null,
      at: null,
    });
    expect(certificationOf(recordOf(digest, passing), "CRM_API", digest).status).toBe("none");
  });

  it("is certified when every key probe that ran passed, against the current declarations", () => {
    expect(certificationOf(recordOf(digest, passing), "PAYMENTS_API", digest)).toEqual({
      status: "certified",
      key_reuse: "pass",
      credential: "pass",
      at: "2026-11-02T10:00:00.000Z",
    });
  });

  it("is refuted when a key probe failed, and reports the credential probes beside it", () => {
    const probes = [probe("key_reuse_same_body", "fail"), probe("no_credential", "fail")];
    expect(certificationOf(recordOf(digest, probes), "PAYMENTS_API", digest)).toMatchObject({
      status: "refuted",
      key_reuse: "fail",
      credential: "fail",
    });
  });

  it("is stale when the declarations changed since, keeping what was measured", () => {
    const current = `sha256:${"b".repeat(64)}`;
    expect(certificationOf(recordOf(digest, passing), "PAYMENTS_API", current)).toMatchObject({
      status: "stale",
      key_reuse: "pass",
    });
  });

  it("is none when every key probe was skipped", () => {
    const probes = [probe("key_reuse_same_body", "skipped"), probe("no_credential", "pass")];
    expect(certificationOf(recordOf(digest, probes), "PAYMENTS_API", digest)).toMatchObject({
      status: "none",
      key_reuse: null,
      credential: "pass",
    });
  });

  it("refuses a record with an unknown probe or a malformed digest", () => {
    expect(() => recordOf("sha256:abc", passing)).toThrow();
    expect(() => recordOf(digest, [probe("key_reuse_twice", "pass")])).toThrow();
  });
});
