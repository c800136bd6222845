import { exports } from "cloudflare:workers";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { ConsoleClient } from "./console-client";
import { assertNoSecrets, OPERATOR_KEYS } from "./helpers";

/**
 * The console's door and the operator API's: a sign-in body the form cannot be read from is a page
 * saying so, never a failure of the proxy; failed authentications are counted per source address
 * (`CF-Connecting-IP`) and per key prefix, and past the limit answered 429 with `Retry-After`.
 * Every test uses source addresses and wrong keys of its own, so no test's failures count toward
 * another's.
 */

let sources = 0;
const freshSource = () => `198.51.100.${++sources}`;
const wrongKey = () => `wrong-${crypto.randomUUID()}`;

/** A browser at `source` that has opened the sign-in form. */
async function atSignIn(source: string): Promise<ConsoleClient> {
  const client = new ConsoleClient();
  await client.send("/console/sign-in", { method: "GET", headers: { "cf-connecting-ip": source } });
  return client;
}

function signIn(client: ConsoleClient, source: string, key: string) {
  return client.send("/console/sign-in", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": source },
    body: new URLSearchParams({ csrf: client.csrf, key }).toString(),
  });
}

describe("a sign-in body the form cannot be read from", () => {
  it("is a 400 page for a multipart type with a body that is not multipart, or a body that is not a form", async () => {
    const client = await atSignIn(freshSource());
    const bodies: Array<[string, string]> = [
      ["multipart/form-data; boundary=xyz", `csrf=${client.csrf}&key=${OPERATOR_KEYS.acme}`],
      ["multipart/form-data", "--xyz\r\nnot a part"],
      ["application/json", JSON.stringify({ csrf: client.csrf, key: OPERATOR_KEYS.acme })],
      ["text/plain", `csrf=${client.csrf}&key=${OPERATOR_KEYS.acme}`],
    ];
    for (const [type, body] of bodies) {
      const answer = await client.send("/console/sign-in", {
        method: "POST",
        headers: { "content-type": type },
        body,
      });
      expect(answer.status, type).toBe(400);
      expect(answer.html, type).toContain("Form unreadable");
      expect(
        answer.setCookies.some((line) => line.startsWith("__Host-console=")),
        type,
      ).toBe(false);
    }
    const untyped = await client.send("/console/sign-in", { method: "POST", body: "key=x" });
    expect(untyped.status).toBe(400);
  });

  it("is a 413 page for a form over 16 KiB, read no further", async () => {
    const client = await atSignIn(freshSource());
    const answer = await client.send("/console/sign-in", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf: client.csrf, key: "k".repeat(20_000) }).toString(),
    });
    expect(answer.status).toBe(413);
    expect(answer.html).toContain("Form too large");
  });
});

describe("failed sign-ins", () => {
  it("answer the eleventh failure from one address within a minute 429 with Retry-After, and refuse even the right key there; another address signs in", async () => {
    const source = freshSource();
    const client = await atSignIn(source);
    for (let attempt = 1; attempt <= 10; attempt++) {
      const refused = await signIn(client, source, wrongKey());
      expect(refused.status, `attempt ${attempt}`).toBe(401);
    }
    const throttled = await signIn(client, source, wrongKey());
    expect(throttled.status).toBe(429);
    expect(throttled.html).toContain("Too many failed sign-ins");
    const retryAfter = Number(throttled.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // The address is over: its key is not even checked.
    const rightKeyHere = await signIn(client, source, OPERATOR_KEYS.globex);
    expect(rightKeyHere.status).toBe(429);
    expect(rightKeyHere.setCookies.some((line) => line.startsWith("__Host-console="))).toBe(false);

    const elsewhere = freshSource();
    const other = await atSignIn(elsewhere);
    const signedIn = await signIn(other, elsewhere, OPERATOR_KEYS.globex);
    expect(signedIn.status).toBe(303);
    expect(signedIn.setCookies.some((line) => line.startsWith("__Host-console="))).toBe(true);
  });

  it("count per key prefix across addresses, refusing the wrong keys past 20 while the right key with that prefix still signs in", async () => {
    const prefix = OPERATOR_KEYS.hooli.slice(0, 8);
    // The bucket refills one failure per 3 s: the clock stands still, so a slow machine's 21
    // attempts are still 21 inside one window.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    for (let attempt = 1; attempt <= 20; attempt++) {
      const source = freshSource();
      const refused = await signIn(await atSignIn(source), source, `${prefix}-${crypto.randomUUID()}`);
      expect(refused.status, `attempt ${attempt}`).toBe(401);
    }
    const source = freshSource();
    const client = await atSignIn(source);
    const throttled = await signIn(client, source, `${prefix}-${crypto.randomUUID()}`);
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const owner = await signIn(client, source, OPERATOR_KEYS.hooli);
    expect(owner.status).toBe(303);
  });
});

describe("failed authentications on the operator API", () => {
  async function operatorRuns(source: string, key: string) {
    const response = await exports.default.fetch(
      new Request("https://proxy.test/v1/runs", {
        headers: { authorization: `Bearer ${key}`, "cf-connecting-ip": source },
      }),
    );
    const text = await response.text();
    assertNoSecrets(text);
    return { status: response.status, headers: response.headers, body: JSON.parse(text) };
  }

  it("answer the eleventh unknown key from one address 429 rate_limited with Retry-After; another address gets in", async () => {
    const source = freshSource();
    for (let attempt = 1; attempt <= 10; attempt++) {
      const refused = await operatorRuns(source, wrongKey());
      expect(refused.status, `attempt ${attempt}`).toBe(401);
      expect(refused.body.error.code).toBe("permission_error");
    }
    const throttled = await operatorRuns(source, wrongKey());
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({
      outcome: "retryable_failure",
      error: {
        code: "rate_limited",
        details: { scope: "authentication_failures", per_source: 10, window_s: 60 },
      },
    });
    expect(throttled.body.error.retry_after_ms).toBeGreaterThan(0);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await operatorRuns(source, OPERATOR_KEYS.initech)).status).toBe(429);
    expect((await operatorRuns(freshSource(), OPERATOR_KEYS.initech)).status).toBe(200);
  });
});
