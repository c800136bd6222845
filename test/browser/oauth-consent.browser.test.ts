import { describe, expect, it } from "vitest";
import { browserStackFor, screenshotPath } from "./harness";

/** A desktop MCP client's loopback callback. Nothing listens there: the test reads the redirect's URL. */
const REDIRECT_URI = "http://127.0.0.1:39917/callback";

const stack = browserStackFor();

function base64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

async function pkcePair() {
  const verifier = base64Url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64Url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  return { verifier, challenge };
}

/** A raw MCP initialize with a bearer: 200 while the token is good, 401 once it is revoked. */
async function initializeStatus(token: string): Promise<number> {
  const response = await fetch(`${stack().proxy.url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "browser-test", version: "1" },
      },
    }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe("OAuth consent in a real browser", () => {
  it("signs the operator in, lets them allow a client, follows the redirect to it, and revokes the grant", async () => {
    const { browser, proxy } = stack();

    // The MCP client registers itself and sends the operator's browser to /authorize.
    const registered = await fetch(`${proxy.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Browser test client",
        application_type: "native",
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      }),
    });
    expect(registered.status).toBe(201);
    const clientId = String(((await registered.json()) as { client_id: string }).client_id);
    const { verifier, challenge } = await pkcePair();
    const authorize = `/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      state: "browser-state",
      code_challenge: challenge,
      code_challenge_method: "S256",
    })}`;

    const context = await browser.newContext({ baseURL: proxy.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();

    // Not signed in: the console's sign-in page, which comes back to the request afterwards.
    await page.goto(authorize);
    expect(new URL(page.url()).pathname).toBe("/console/sign-in");
    expect(await page.getByRole("status").first().textContent()).toContain("An MCP client asks for access");
    await page.getByLabel("Operator key").fill("acme-operator-key");
    await page.getByLabel("Operator key").press("Enter");
    await page.waitForURL((url) => url.pathname === "/authorize");

    expect(await page.locator("main").textContent()).toContain("Browser test client");
    expect(await page.locator("main").textContent()).toContain(REDIRECT_URI);
    expect(await page.getByRole("radio", { name: /^support / }).isChecked()).toBe(true);
    await page.screenshot({ path: screenshotPath("oauth-consent.png"), fullPage: true });

    // Allowing posts the form; the answer redirects to the client, which the page's policy permits.
    // Nothing listens there, so only the request is awaited: that the browser made it is the point.
    const redirected = page.waitForRequest((request) => request.url().startsWith(REDIRECT_URI));
    await page.getByRole("button", { name: "Allow" }).click();
    const callback = new URL((await redirected).url());
    expect(callback.searchParams.get("state")).toBe("browser-state");
    expect(callback.searchParams.get("code")).toBeTruthy();

    const tokens = await fetch(`${proxy.url}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: clientId,
        code: callback.searchParams.get("code") ?? "",
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
      }),
    });
    expect(tokens.status).toBe(200);
    const accessToken = String(((await tokens.json()) as { access_token: string }).access_token);
    expect(await initializeStatus(accessToken)).toBe(200);

    // The grant is listed in the console; revoking it cuts the client off. A page of its own (same
    // operator session): the first page's navigation to the client fails in its own time, and its
    // error page would interrupt a navigation started there meanwhile.
    const consolePage = await context.newPage();
    await consolePage.goto("/console/oauth");
    const row = consolePage
      .getByRole("row")
      .filter({ hasText: "Browser test client" })
      .filter({ hasText: "support" });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.textContent()).toMatch(/operator:[0-9a-f]{12}/);
    await consolePage.screenshot({ path: screenshotPath("oauth-grants.png"), fullPage: true });
    await row.getByRole("button", { name: /Revoke/ }).click();
    await consolePage.waitForURL((url) => url.searchParams.get("revoked") === "grant");
    expect(await consolePage.getByRole("status").first().textContent()).toContain("revoked");
    expect(await initializeStatus(accessToken)).toBe(401);
    await context.close();
  });
});
