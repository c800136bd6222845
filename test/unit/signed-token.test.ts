import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { base64UrlDecode, base64UrlEncode, signToken, verifyToken } from "../../src/auth/signed-token";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

const KEYS = ["k-current", "k-previous"];
const parse = (value: unknown) => value as { run: string; exp: number };
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

describe("signed tokens", () => {
  it("decodes only the one spelling base64UrlEncode makes of the bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const text = base64UrlEncode(bytes);
        expect(base64UrlDecode(text)).toEqual(bytes);
        for (const other of ALPHABET) {
          const respelled = text.slice(0, -1) + other;
          // Another last character is either refused or other bytes, never a second spelling of these.
          if (text.length > 0 && respelled !== text) expect(base64UrlDecode(respelled)).not.toEqual(bytes);
        }
      }),
      plan({ seed: 20261202, numRuns: 200 }),
    );
  });

  it("refuses every other spelling of a token's MAC, though atob would read some as the same bytes", async () => {
    const token = await signToken("rh1", { run: "run_1", exp: Date.now() + 60_000 }, KEYS);
    const [prefix, body, mac = ""] = token.split(".");
    expect((await verifyToken("rh1", token, KEYS, parse)).ok).toBe(true);
    for (const last of ALPHABET) {
      const respelled = `${prefix}.${body}.${mac.slice(0, -1)}${last}`;
      if (respelled === token) continue;
      expect(await verifyToken("rh1", respelled, KEYS, parse)).toMatchObject({ ok: false });
    }
  });

  it("accepts a token signed with the previous key and refuses an expired one", async () => {
    const previous = await signToken("rh1", { run: "run_1", exp: Date.now() + 60_000 }, ["k-previous"]);
    expect(await verifyToken("rh1", previous, KEYS, parse)).toMatchObject({ ok: true });
    const expired = await signToken("rh1", { run: "run_1", exp: Date.now() - 1 }, KEYS);
    expect(await verifyToken("rh1", expired, KEYS, parse)).toEqual({ ok: false, reason: "expired" });
    expect(await verifyToken("rt", previous, KEYS, parse)).toEqual({ ok: false, reason: "malformed" });
  });
});
