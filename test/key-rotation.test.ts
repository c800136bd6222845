import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findKeyOwner, parseKeyHashes, parseKeyList } from "../src/auth/keys";
import { issueRunToken, verifyRunToken } from "../src/auth/run-token";
import { sha256Hex } from "../src/core/digest";
import { issueUpstreamCredential, verifyUpstreamCredential } from "../src/upstream/credential";
import { callTool, openRun, request, type TestRun } from "./helpers";

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

describe("upstream credential keys rotate the same way", () => {
  const credential = { tenant: "acme", run: "run_1", tool: "lookup_order", exp: Date.now() + 60_000 };

  it("let an upstream that lists both keys accept credentials of either", async () => {
    const old = await issueUpstreamCredential(credential, [OLD]);
    const current = await issueUpstreamCredential(credential, [NEW, OLD]);
    expect(await verifyUpstreamCredential(old, [NEW, OLD])).toMatchObject({ ok: true });
    expect(await verifyUpstreamCredential(current, [NEW, OLD])).toMatchObject({ ok: true });
  });

  it("break an upstream that has not learned the new key yet, which is why upstreams learn it first", async () => {
    const current = await issueUpstreamCredential(credential, [NEW, OLD]);
    expect(await verifyUpstreamCredential(current, [OLD])).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("are refused by the sandbox upstream when signed with a key it does not list", async () => {
    const sandboxKeys = parseKeyList("UPSTREAM_KEYS", env.UPSTREAM_KEYS);
    const lookup = async (keys: string[]) => {
      const token = await issueUpstreamCredential({ ...credential, tenant: "acme" }, keys);
      const response = await env.ORDERS_API.fetch("https://sandbox.test/orders/A1001", {
        headers: { authorization: `Bearer ${token}` },
      });
      await response.body?.cancel();
      return response.status;
    };
    expect(await lookup(sandboxKeys)).toBe(200);
    expect(await lookup([NEW])).toBe(401);
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
    const token = await issueRunToken(claims(run.id), [retired]);
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
