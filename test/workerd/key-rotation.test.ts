import { env } from "cloudflare:workers";
import { createLocalJWKSet, decodeProtectedHeader } from "jose";
import { describe, expect, it } from "vitest";
import { findKeyOwner, parseKeyHashes, parseKeyList } from "../../src/auth/keys";
import { issueRunToken, verifyRunToken } from "../../src/auth/run-token";
import { publicJwks, type UpstreamSigningKey } from "../../src/config/signing-keys";
import { sha256Hex } from "../../src/core/digest";
import { issueUpstreamCredential, verifyUpstreamCredential } from "../../src/upstream/credential";
import { callTool, openRun, request, type TestRun } from "./helpers";
import { configuredSigningKeys, generateSigningKey } from "./upstream-credentials";

const OLD = "signing-key-of-last-quarter-0001";
const NEW = "signing-key-of-this-quarter-0002";
const claims = (run = "run_1") => ({ tenant: "acme", run, ns: "support", exp: Date.now() + 60_000 });

/** The configured lists, from .dev.vars.example: what the worker under test actually uses. */
const runTokenKeys = () => parseKeyList("RUN_TOKEN_KEYS", env.RUN_TOKEN_KEYS);

describe("run-token signing keys rotate with an overlap window", () => {
  it("verify a token signed with the previous key while both keys are listed", async () => {
    const before = await issueRunToken(claims(), [OLD]);
    expect(await verifyRunToken(before, [NEW, OLD])).toMatchObject({ ok: true });
  });

  it("sign with the first key only", async () => {
    const after = await issueRunToken(claims(), [NEW, OLD]);
    expect(await verifyRunToken(after, [NEW])).toMatchObject({ ok: true });
    expect(await verifyRunToken(after, [OLD])).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("refuse the previous key's tokens once it is dropped from the list", async () => {
    const before = await issueRunToken(claims(), [OLD]);
    expect(await verifyRunToken(before, [NEW])).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("still check expiry for a token signed with the previous key", async () => {
    const expired = await issueRunToken({ ...claims(), exp: Date.now() - 1 }, [OLD]);
    expect(await verifyRunToken(expired, [NEW, OLD])).toEqual({ ok: false, reason: "expired" });
  });
});

describe("upstream signing keys rotate with an overlap: the first signs, every listed key is published", () => {
  const lookup = { method: "GET", target: "/orders/A1001", body: null, idempotency_key: null };
  const credential = () => ({
    tenant: "acme",
    run: "run_1",
    tool: "lookup_order",
    exp: Date.now() + 60_000,
    request: lookup,
  });
  const verifyWith = (token: string, published: UpstreamSigningKey[]) =>
    verifyUpstreamCredential(token, createLocalJWKSet(publicJwks(published)), {
      tool: "lookup_order",
      request: lookup,
    });

  it("sign with the first key only, naming it in the header's kid", async () => {
    const [current, retired] = [await generateSigningKey("next"), await generateSigningKey("previous")];
    const token = await issueUpstreamCredential(credential(), [current, retired]);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: "EdDSA", kid: "next" });
    expect(await verifyWith(token, [current])).toMatchObject({ ok: true, credential: { kid: "next" } });
    expect(await verifyWith(token, [retired])).toEqual({ ok: false, reason: "unknown_key" });
  });

  it("let an upstream that has the published set accept credentials of either key during the overlap", async () => {
    const [current, retired] = [await generateSigningKey("next"), await generateSigningKey("previous")];
    const before = await issueUpstreamCredential(credential(), [retired]);
    const after = await issueUpstreamCredential(credential(), [current, retired]);
    expect(await verifyWith(before, [current, retired])).toMatchObject({ ok: true });
    expect(await verifyWith(after, [current, retired])).toMatchObject({ ok: true });
  });

  it("refuse a removed key's credentials, and a listed kid whose signature is another key's", async () => {
    const [current, removed] = [await generateSigningKey("next"), await generateSigningKey("previous")];
    const stale = await issueUpstreamCredential(credential(), [removed]);
    expect(await verifyWith(stale, [current])).toEqual({ ok: false, reason: "unknown_key" });
    const impostor = await issueUpstreamCredential(credential(), [{ ...removed, kid: "next" }]);
    expect(await verifyWith(impostor, [current])).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("are accepted by the sandbox upstream for the current and the retired configured key, and refused for an unlisted one", async () => {
    const lookup = async (keys: UpstreamSigningKey[]) => {
      const token = await issueUpstreamCredential(credential(), keys);
      const response = await env.ORDERS_API.fetch("https://sandbox.test/orders/A1001", {
        headers: { authorization: `Bearer ${token}` },
      });
      const body = await response.text();
      return { status: response.status, body };
    };
    const [current, retired] = configuredSigningKeys();
    expect((await lookup([current as UpstreamSigningKey])).status).toBe(200);
    expect((await lookup([retired as UpstreamSigningKey])).status).toBe(200);
    const unlisted = await lookup([await generateSigningKey("demo-2026-02")]);
    expect(unlisted.status).toBe(401);
    expect(unlisted.body).toContain("a key this API does not trust");
  });
});

describe("tenant keys rotate by listing two hashes", () => {
  it("map both listed keys of a tenant to that tenant, and a dropped key to no one", async () => {
    const hashes = parseKeyHashes(
      "TENANT_KEYS",
      JSON.stringify({ acme: [await sha256Hex("acme-new"), await sha256Hex("acme-old")] }),
    );
    expect(await findKeyOwner("acme-new", hashes)).toBe("acme");
    expect(await findKeyOwner("acme-old", hashes)).toBe("acme");
    const afterRotation = new Map([["acme", [await sha256Hex("acme-new")]]]);
    expect(await findKeyOwner("acme-old", afterRotation)).toBeNull();
  });
});

describe("rotation through the worker (configured lists in .dev.vars.example)", () => {
  function callWith(run: TestRun, token: string) {
    return callTool({ ...run, token }, "lookup_order", { order_id: "A1001" });
  }

  it("configures a current and a retired run-token key, and signs new runs with the current one", async () => {
    const [current, retired] = runTokenKeys();
    expect(current).toBeDefined();
    expect(retired).toBeDefined();
    const run = await openRun("acme");
    expect(await verifyRunToken(run.token, [current as string])).toMatchObject({ ok: true });
    expect(await verifyRunToken(run.token, [retired as string])).toMatchObject({ ok: false });
  });

  it("accept a run token signed with the retired key for status and tool calls", async () => {
    const run = await openRun("acme");
    const retired = runTokenKeys()[1] as string;
    // The run's own claims (its open among them), signed with the retired key.
    const opened = await verifyRunToken(run.token, runTokenKeys());
    if (!opened.ok) throw new Error("the run's token does not verify");
    const token = await issueRunToken(opened.payload, [retired]);
    const status = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(status.status).toBe(200);
    const call = await callWith(run, token);
    expect(call.status).toBe(200);
    expect(call.body.outcome).toBe("success");
  });

  it("refuse a run token signed with a key that is not listed", async () => {
    const run = await openRun("acme");
    const token = await issueRunToken(claims(run.id), ["a-key-retired-long-ago-00000000"]);
    const { status, body } = await callWith(run, token);
    expect(status).toBe(401);
    expect(body.error?.code).toBe("permission_error");
  });

  it("open runs of the same tenant with either of its two listed keys, and not with an unlisted one", async () => {
    const open = (key: string) =>
      request("/v1/runs", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ namespace: "support" }),
      });
    for (const key of ["acme-demo-key", "acme-next-demo-key"]) {
      const { status, body } = await open(key);
      expect(status, key).toBe(201);
      const data = body.data as { run_id: string; run_token: string };
      const verified = await verifyRunToken(data.run_token, runTokenKeys());
      expect(verified.ok && verified.payload.tenant).toBe("acme");
    }
    expect((await open("acme-previous-demo-key")).status).toBe(401);
  });
});
