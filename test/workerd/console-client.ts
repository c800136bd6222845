import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { assertNoSecrets, OPERATOR_KEYS } from "./helpers";

/**
 * A minimal browser for the console's HTML pages: a cookie jar, redirects not followed, and the
 * last CSRF token a page showed. Every page it reads is scanned for secrets.
 */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  csrf = "";

  get(path: string) {
    return this.send(path, { method: "GET" });
  }

  post(path: string, form: Record<string, string>) {
    return this.send(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    });
  }

  async send(path: string, init: RequestInit) {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const response = await exports.default.fetch(
      new Request(`https://proxy.test${path}`, { ...init, headers, redirect: "manual" }),
    );
    const setCookies = response.headers.getAll("set-cookie");
    for (const line of setCookies) {
      const [pair = ""] = line.split(";");
      const separator = pair.indexOf("=");
      const name = pair.slice(0, separator);
      const value = pair.slice(separator + 1);
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const html = await response.text();
    assertNoSecrets(html);
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    if (csrf) this.csrf = csrf;
    return { status: response.status, headers: response.headers, html, setCookies };
  }
}

/**
 * A console session of a tenant's operator, signed in through the form like a person would; `key`
 * picks one of the tenant's other operators (test/workerd/helpers.ts `ACME_OPERATORS`).
 */
export async function signedInOperator(
  tenant: keyof typeof OPERATOR_KEYS = "acme",
  key: string = OPERATOR_KEYS[tenant],
): Promise<ConsoleClient> {
  const client = new ConsoleClient();
  await client.get("/console/sign-in");
  const response = await client.post("/console/sign-in", { csrf: client.csrf, key });
  expect(response.status).toBe(303);
  await client.get("/console");
  return client;
}
