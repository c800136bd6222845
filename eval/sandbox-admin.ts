import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { getPlatformProxy } from "wrangler";
import { ROOT } from "./paths";
import type {
  AdminDraft,
  AdminEmail,
  AdminRefund,
  AdminRequest,
  AdminTicket,
  SourceEffects,
} from "./source-types";

/**
 * The sandbox's admin API: the source of truth for what really happened upstream. An evaluation
 * checks outcomes here, never in the proxy's answers.
 */

interface AdminFetcher {
  fetch(
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<Response>;
}

export class SandboxAdmin {
  readonly #fetcher: AdminFetcher;
  readonly #token: string;
  readonly #dispose: () => Promise<void>;

  private constructor(fetcher: AdminFetcher, token: string, dispose: () => Promise<void>) {
    this.#fetcher = fetcher;
    this.#token = token;
    this.#dispose = dispose;
  }

  /**
   * Over plain HTTP when SANDBOX_ADMIN_URL names a sandbox that serves its own port (a deployed
   * one); otherwise through a service binding found in wrangler's dev registry, which reaches the
   * sandbox inside a local `wrangler dev` session of the proxy. `registryPath` names the registry:
   * a folder, null for wrangler's default, left out for whatever WRANGLER_REGISTRY_PATH says.
   * eval/sandbox-of-proxy.ts finds the one a given proxy's sandbox is in.
   */
  static async connect(options: { registryPath?: string | null } = {}): Promise<SandboxAdmin> {
    const token = adminToken();
    const url = process.env.SANDBOX_ADMIN_URL;
    if (url) {
      const base = url.replace(/\/+$/, "");
      return new SandboxAdmin(
        { fetch: (path, init) => fetch(`${base}${new URL(path).pathname}${new URL(path).search}`, init) },
        token,
        async () => {},
      );
    }
    // The in-process Miniflare must not reach the internet either (cf.json, metrics, error reports).
    process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
    process.env.WRANGLER_SEND_METRICS ??= "false";
    process.env.WRANGLER_SEND_ERROR_REPORTS ??= "false";
    // Wrangler reads the registry from the environment when the client starts, and only then.
    const before = process.env.WRANGLER_REGISTRY_PATH;
    if (options.registryPath === null) delete process.env.WRANGLER_REGISTRY_PATH;
    else if (options.registryPath !== undefined) process.env.WRANGLER_REGISTRY_PATH = options.registryPath;
    let proxy: Awaited<ReturnType<typeof getPlatformProxy<{ SANDBOX: AdminFetcher }>>>;
    try {
      proxy = await getPlatformProxy<{ SANDBOX: AdminFetcher }>({
        configPath: join(ROOT, "eval", "sandbox-admin.wrangler.toml"),
        persist: false,
        remoteBindings: false,
      });
    } finally {
      if (before === undefined) delete process.env.WRANGLER_REGISTRY_PATH;
      else process.env.WRANGLER_REGISTRY_PATH = before;
    }
    return new SandboxAdmin(proxy.env.SANDBOX, token, () => proxy.dispose());
  }

  async get<T>(path: string): Promise<T> {
    const response = await this.#fetcher.fetch(`http://sandbox.internal${path}`, {
      headers: { "x-sandbox-admin": this.#token },
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`sandbox admin ${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return JSON.parse(text) as T;
  }

  /** Every refund, ticket and email the run caused, and every request it sent, from the sandbox's records. */
  async effectsOf(tenant: string, runId: string): Promise<SourceEffects> {
    const mine = <T extends { run_id: string | null }>(rows: T[]) =>
      rows.filter((row) => row.run_id === runId);
    const q = encodeURIComponent(tenant);
    const [refunds, tickets, emails, drafts, requests] = await Promise.all([
      this.get<{ refunds: AdminRefund[] }>(`/_admin/refunds?tenant=${q}`),
      this.get<{ tickets: AdminTicket[] }>(`/_admin/tickets?tenant=${q}`),
      this.get<{ emails: AdminEmail[] }>(`/_admin/emails?tenant=${q}`),
      this.drafts(tenant),
      this.get<{ requests: AdminRequest[] }>(`/_admin/requests?run_id=${encodeURIComponent(runId)}`),
    ]);
    return {
      refunds: mine(refunds.refunds),
      tickets: mine(tickets.tickets),
      emails: mine(emails.emails),
      drafts,
      requests: requests.requests,
    };
  }

  /** The tenant's stored email drafts. */
  async drafts(tenant: string): Promise<AdminDraft[]> {
    const q = encodeURIComponent(tenant);
    return (await this.get<{ drafts: AdminDraft[] }>(`/_admin/email-drafts?tenant=${q}`)).drafts;
  }

  /** A member of staff edits a draft in the CRM: its text changes and its version goes up. */
  async editDraft(tenant: string, draftId: string, edit: { subject?: string; body?: string }): Promise<void> {
    const path = `/_admin/email-drafts/${encodeURIComponent(draftId)}?tenant=${encodeURIComponent(tenant)}`;
    const response = await this.#fetcher.fetch(`http://sandbox.internal${path}`, {
      method: "PUT",
      headers: { "x-sandbox-admin": this.#token, "content-type": "application/json" },
      body: JSON.stringify(edit),
    });
    if (!response.ok) throw new Error(`sandbox admin PUT ${path} answered ${response.status}`);
  }

  dispose(): Promise<void> {
    return this.#dispose();
  }
}

/** SANDBOX_ADMIN_TOKEN, else the one `npm start` put in sandbox/.dev.vars, else the committed demo token. */
function adminToken(): string {
  if (process.env.SANDBOX_ADMIN_TOKEN) return process.env.SANDBOX_ADMIN_TOKEN;
  for (const file of [join(ROOT, "sandbox", ".dev.vars"), join(ROOT, "sandbox", ".dev.vars.example")]) {
    if (!existsSync(file)) continue;
    const match = /^SANDBOX_ADMIN_TOKEN=(.+)$/m.exec(readFileSync(file, "utf8"));
    if (match?.[1]) return match[1].trim();
  }
  throw new Error("no sandbox admin token: set SANDBOX_ADMIN_TOKEN");
}
