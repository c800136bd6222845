import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { postSignedEvent } from "../../src/approvals/signed-webhook";

/**
 * Webhook and alert receivers named by a URL (`APPROVAL_WEBHOOK` as a var, such as a chat webhook)
 * are reached through the egress guard: https to a public host only, and no redirect followed. The
 * global `fetch` is replaced for `https://hooks.test`, so nothing leaves the machine; every request
 * that reaches it is recorded with its redirect mode.
 */

const sent: Array<{ url: string; method: string; redirect: string | undefined }> = [];
const answers = new Map<string, () => Response>();

beforeAll(() => {
  vi.spyOn(console, "warn").mockImplementation(() => {});
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const request = new Request(input, init);
    sent.push({ url: request.url, method: request.method, redirect: init?.redirect ?? request.redirect });
    const answer = answers.get(request.url);
    return Promise.resolve(answer ? answer() : new Response(null, { status: 202 }));
  });
});

afterAll(() => {
  vi.restoreAllMocks();
});

const event = { id: "evt_egress_test", at: new Date(), body: JSON.stringify({ type: "approval.created" }) };

function deliver(hook: string) {
  return postSignedEvent({ ...env, APPROVAL_WEBHOOK: hook } as typeof env, event);
}

describe("a webhook receiver named by URL", () => {
  it("gets the signed delivery over https, with redirects left to the guard", async () => {
    const mark = sent.length;
    expect(await deliver("https://hooks.test/approvals")).toBe("acknowledged");
    expect(sent.slice(mark)).toEqual([
      { url: "https://hooks.test/approvals", method: "POST", redirect: "manual" },
    ]);
  });

  it("is never sent to plain http, loopback, a private or link-local address, or a local name", async () => {
    const mark = sent.length;
    for (const hook of [
      "http://hooks.test/approvals",
      "https://127.0.0.1/hook",
      "https://2130706433/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://10.0.0.7/hook",
      "https://169.254.169.254/latest/meta-data/",
      "https://localhost/hook",
    ]) {
      expect(await deliver(hook), hook).toBe("not_configured");
    }
    expect(sent.slice(mark)).toEqual([]);
  });

  it("does not follow a redirect: the delivery fails and is sent again later", async () => {
    answers.set(
      "https://hooks.test/moved",
      () => new Response(null, { status: 307, headers: { location: "https://127.0.0.1/hook" } }),
    );
    const mark = sent.length;
    expect(await deliver("https://hooks.test/moved")).toBe("failed");
    expect(sent.slice(mark)).toEqual([
      { url: "https://hooks.test/moved", method: "POST", redirect: "manual" },
    ]);
  });
});
