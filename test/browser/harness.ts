import { existsSync, mkdirSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { type LocalProxy, startProxy } from "../../scripts/local-proxy";

/** Debian's Chromium, which `npm test` installs when it is missing (scripts/ensure-chromium.mjs). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
/** Where the browser tests leave their screenshots (not committed; docs/screenshots/ is copied from here). */
export const SCREENSHOTS = new URL("../../screenshots/", import.meta.url);

export const screenshotPath = (name: string) => new URL(name, SCREENSHOTS).pathname;

/** A proxy with its sandbox on a loopback port the OS hands out, and a headless Chromium to drive it. */
export interface BrowserStack {
  proxy: LocalProxy;
  browser: Browser;
  close(): Promise<void>;
}

/** What a test file changes of the proxy it starts: `vars` replace its variables (scripts/local-proxy.ts). */
export interface StackOptions {
  vars?: Record<string, string>;
}

/**
 * Starts the proxy and the browser for one test file. Chromium runs headless without its sandbox
 * (containers lack the namespaces it needs) and with everything that would reach the network off.
 */
export async function startBrowserStack(options: StackOptions = {}): Promise<BrowserStack> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: run npm test, which installs it`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  const proxy = await startProxy(options);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    proxy,
    browser,
    async close() {
      await browser.close();
      proxy.stop();
    },
  };
}

/** Signs in to the console through its form, as a person would, and waits for the pending list. */
export async function signIn(page: Page, operatorKey = "acme-operator-key"): Promise<void> {
  await page.goto("/console/sign-in");
  await page.getByLabel("Operator key").fill(operatorKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/console");
}

/** How much wider than the viewport the page is: 0 when nothing scrolls sideways. */
export async function horizontalOverflow(page: Page): Promise<number> {
  const scrollWidth = (await page.evaluate("document.documentElement.scrollWidth")) as number;
  return scrollWidth - (page.viewportSize()?.width ?? 0);
}

/**
 * The stack of a test file: started before its tests and closed after them. Returns a getter, so a
 * test (or a helper it calls) reads the proxy and the browser once they are up.
 */
export function browserStackFor(options: StackOptions = {}): () => BrowserStack {
  let stack: BrowserStack | undefined;
  beforeAll(async () => {
    stack = await startBrowserStack(options);
  });
  afterAll(async () => {
    await stack?.close();
  });
  return () => {
    if (!stack) throw new Error("the browser or the proxy did not start");
    return stack;
  };
}

/** An API answer as the browser tests read it. */
export interface ApiEnvelope {
  outcome: string;
  data: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
  approval: { id: string } | null;
}

/**
 * The agent's side of a browser test: JSON posts to the stack's proxy, and an acme support run
 * opened with the demo tenant key, so a test can make the approvals an operator then decides.
 */
export function agentOf(stack: () => BrowserStack) {
  async function post(path: string, credential: string, body: unknown): Promise<ApiEnvelope> {
    const response = await fetch(`${stack().proxy.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return (await response.json()) as ApiEnvelope;
  }
  async function openRun(): Promise<{ id: string; token: string }> {
    const opened = await post("/v1/runs", "acme-demo-key", { namespace: "support" });
    return { id: String(opened.data?.run_id), token: String(opened.data?.run_token) };
  }
  return { post, openRun };
}
