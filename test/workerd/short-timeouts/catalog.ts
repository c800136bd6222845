import * as z from "zod";
import { Catalog, loadCatalog } from "../../../src/catalog/catalog";
import type { StaticHeaderCredential, ToolSpec } from "../../../src/catalog/define-tool";
import { settleReadOf } from "../../../src/catalog/settle-read";
import type { ToolVersion } from "../../../src/catalog/tool-version";
import { forgetAnnouncement } from "../../../src/ledger/catalog-client";
import { forgetSpecs } from "../../../src/specs/tool-specs";
import { catalog as productCatalog, discoveryTools as productDiscoveryTools } from "../../../src/tools";

/**
 * The catalog the `workerd-short-timeouts` project serves in place of src/tools/index.ts (see
 * vitest.config.ts): the product's tools, unchanged but for a timeout a test can outwait in a
 * moment. Long enough for a sandbox call on a busy machine, short enough to wait out. Two remote
 * tools are also declared as a platform team might get them wrong or meet a lesser server (below),
 * so remote-tool-variants.test.ts proves what the proxy does then; the helpdesk holds more tools
 * than a run lists at once, with a default set.
 */
export const SHORT_TIMEOUT_MS = 1_000;

/**
 * One remote write whose server ignores the key: `add_ticket_note` sends it as
 * `params.idempotencyKey`, which the sandbox's helpdesk does not read, and is declared accordingly
 * (`honoured: false`), as a server that takes no keys would be.
 */
function ignoringKeys(tool: ToolSpec): ToolSpec {
  const remote = tool.upstream?.remote;
  if (tool.name !== "add_ticket_note" || !tool.upstream || !remote) return tool;
  const server = { ...remote.server, carriers: ["params" as const], honoured: false };
  return { ...tool, upstream: { ...tool.upstream, remote: { ...remote, server } } };
}

/**
 * One remote read whose declared output the server's answer does not meet: `get_conversation`
 * declares a field the helpdesk never sends, as a declaration reviewed against another version would.
 */
function expectingMore(tool: ToolSpec): ToolSpec {
  if (tool.name !== "get_conversation") return tool;
  return {
    ...tool,
    output: z.object({ conversation_id: z.string(), escalation_level: z.number() }),
    untrusted: [],
    trusted_text: { conversation_id: "an id the helpdesk issues" },
  };
}

/**
 * `issue_refund_v0`: `issue_refund` sent to the sandbox's first payments API (`POST /v0/refunds`),
 * which ignores Idempotency-Key as many real APIs do, declared truthfully (`honoured: false`) with
 * the read that settles a refund in doubt: the order's refunds of this amount and reason, made since
 * the call's first attempt. The v0 API keeps no answers under keys, so there is none to read back.
 */
function refundWithoutKeys(product: readonly ToolSpec[]): ToolSpec[] {
  const refund = product.find((tool) => tool.name === "issue_refund");
  if (!refund?.upstream || !refund.observe) return [];
  const { answer_by_key: _none, ...observe } = refund.observe;
  const request = refund.upstream.request;
  return [
    {
      ...refund,
      name: "issue_refund_v0",
      title: "Refund an order (payments API v0)",
      upstream: {
        ...refund.upstream,
        request: (args) => ({ ...request(args), path: "/v0/refunds" }),
        idempotency: { header: "Idempotency-Key", honoured: false, basis: "declared", retention_ms: null },
      },
      observe,
      settle: settleReadOf({
        tool: "lookup_order",
        args: { order_id: { arg: "/order_id" } },
        items: "refunds",
        match: { amount_cents: { arg: "/amount_cents" }, reason: { arg: "/reason" } },
        since: "created_at",
        effect_id: "refund_id",
      }),
    },
  ];
}

/** How many tools the helpdesk holds here, past what a run lists at once (MAX_LISTED_TOOLS). */
export const WIDE_HELPDESK_TOOLS = 12;

/** The helpdesk's own tools: what a run opened on it without a subset lists here. */
const HELPDESK_DEFAULT_SET = [
  "search_articles",
  "get_ticket_notes",
  "add_ticket_note",
  "get_conversation",
  "purge_conversation",
];

/**
 * The helpdesk as a namespace of more tools than a run lists at once: its own five, listed by
 * default, and searches of archived articles (the server's own search, under other names), which a
 * run finds with find_tools and calls with use_tool, as it would the other operations of a large
 * API (default-tools.test.ts).
 */
function wideHelpdesk(product: readonly ToolSpec[]): ToolSpec[] {
  const search = product.find((tool) => tool.name === "search_articles");
  if (!search) return [];
  return Array.from({ length: WIDE_HELPDESK_TOOLS - HELPDESK_DEFAULT_SET.length }, (_, index) => ({
    ...search,
    name: `search_archive${index + 1}`,
    title: `Search articles archive ${index + 1}`,
  }));
}

const listedByDefault = (tool: ToolSpec): ToolSpec =>
  tool.namespace === "helpdesk" && HELPDESK_DEFAULT_SET.includes(tool.name)
    ? { ...tool, listed_by_default: true }
    : tool;

/** The secrets the tools of `withoutTheirSecret` name, which this project's environment never sets. */
export const UNSET_SECRETS = { http: "SHIPPING_PARTNER_API_KEY", mcp: "HELPDESK_API_TOKEN" } as const;

/**
 * `lookup_shipment_keyed` and `search_articles_keyed`: an HTTP tool and a remote MCP tool declared
 * with a static header whose Workers secret was never set, as after a deploy that forgot it, so
 * missing-secret.test.ts proves the proxy sends nothing, and never its own JWT instead.
 */
function withoutTheirSecret(product: readonly ToolSpec[]): ToolSpec[] {
  const keyed = (name: string, copy: string, credential: Omit<StaticHeaderCredential, "kind">) => {
    const tool = product.find((candidate) => candidate.name === name);
    if (!tool?.upstream) return [];
    const upstream = { ...tool.upstream, credential: { kind: "static_header" as const, ...credential } };
    return [{ ...tool, name: copy, upstream }];
  };
  return [
    ...keyed("lookup_shipment", "lookup_shipment_keyed", {
      header: "X-Api-Key",
      secret: UNSET_SECRETS.http,
      prefix: "",
    }),
    ...keyed("search_articles", "search_articles_keyed", {
      header: "Authorization",
      secret: UNSET_SECRETS.mcp,
      prefix: "Bearer ",
    }),
  ];
}

/**
 * `get_ticket_notes_2025`: the helpdesk's ticket notes over the 2025 revisions (a session), as a
 * server without the 2026-07-28 revision is reached, its own entry in the proxy's per-isolate
 * memory of servers, so drift-window.test.ts can drift it and see the session's server say so.
 */
function overSessions(product: readonly ToolSpec[]): ToolSpec[] {
  const notes = product.find((tool) => tool.name === "get_ticket_notes");
  const remote = notes?.upstream?.remote;
  if (!notes?.upstream || !remote) return [];
  const server = { ...remote.server, name: "HELPDESK_MCP_2025", protocol: "legacy" as const };
  return [
    {
      ...notes,
      name: "get_ticket_notes_2025",
      upstream: { ...notes.upstream, remote: { ...remote, server } },
    },
  ];
}

/** The re-list window `get_ticket_notes_5s`'s server declares (`definitions_max_age_s: 5`). */
export const SHORT_RELIST_WINDOW_MS = 5_000;

/**
 * `get_ticket_notes_5s`: the helpdesk's ticket notes from a server declared with a re-list window
 * shorter than the default, its own entry in the proxy's memory of listings, so drift-window.test.ts
 * sees the declared window hold instead of the default one.
 */
function relistedSooner(product: readonly ToolSpec[]): ToolSpec[] {
  const notes = product.find((tool) => tool.name === "get_ticket_notes");
  const remote = notes?.upstream?.remote;
  if (!notes?.upstream || !remote) return [];
  const server = {
    ...remote.server,
    name: "HELPDESK_MCP_5S",
    definitions_max_age_ms: SHORT_RELIST_WINDOW_MS,
  };
  return [
    { ...notes, name: "get_ticket_notes_5s", upstream: { ...notes.upstream, remote: { ...remote, server } } },
  ];
}

/** The product's timeout rule by class, scaled down to the short timeout: still checked. */
const SHORT_TIMEOUT_RULE = { readMinMs: SHORT_TIMEOUT_MS, keyedMaxMs: SHORT_TIMEOUT_MS };

/**
 * A run opened on support without a subset lists the whole namespace, at most ten tools without a
 * default set, so this catalog trades support's policy search, which no test of this project calls,
 * for the refund on the v0 API.
 */
const product = productCatalog.all().filter((tool) => tool.name !== "search_refund_policy");

const served = [
  ...product,
  ...refundWithoutKeys(product),
  ...wideHelpdesk(product),
  ...withoutTheirSecret(product),
  ...overSessions(product),
  ...relistedSooner(product),
].map((tool) =>
  listedByDefault(
    expectingMore(ignoringKeys({ ...tool, timeout_ms: Math.min(tool.timeout_ms, SHORT_TIMEOUT_MS) })),
  ),
);

/**
 * The catalog, as a deploy may change it while runs are open (catalog-changes.test.ts and the
 * model-based test's catalog steps): every use asks the catalog served now, which `reviseCatalog`
 * replaces. The rest of the Worker holds this one object, as it holds src/tools/index.ts's.
 */
class RevisableCatalog extends Catalog {
  #current: Catalog;

  constructor(initial: Catalog) {
    super(new Map());
    this.#current = initial;
  }

  serve(next: Catalog): void {
    this.#current = next;
  }

  override namespaces(): string[] {
    return this.#current.namespaces();
  }

  override hasNamespace(namespace: string): boolean {
    return this.#current.hasNamespace(namespace);
  }

  override tools(namespace: string): ToolSpec[] {
    return this.#current.tools(namespace);
  }

  override listedByDefault(namespace: string): string[] | null {
    return this.#current.listedByDefault(namespace);
  }

  override find(namespace: string, name: string): ToolSpec | undefined {
    return this.#current.find(namespace, name);
  }

  override all(): ToolSpec[] {
    return this.#current.all();
  }

  override version(): Promise<string> {
    return this.#current.version();
  }

  override toolVersion(tool: ToolSpec): Promise<ToolVersion> {
    return this.#current.toolVersion(tool);
  }
}

const original = loadCatalog(served, SHORT_TIMEOUT_RULE);

export const catalog = new RevisableCatalog(original);

/**
 * Serves the catalog `edit` makes of the tools served now, checked by the same rules, as a deploy
 * would: the isolate forgets what it built from the one before (specs) and announces the new one to
 * the deployment's beacon on its next request, as a new deploy's isolates do.
 */
export function reviseCatalog(edit: (tools: readonly ToolSpec[]) => ToolSpec[]): void {
  catalog.serve(loadCatalog(edit(catalog.all()), SHORT_TIMEOUT_RULE));
  forgetSpecs();
  forgetAnnouncement();
}

/** Serves the catalog this project started with again. */
export function restoreCatalog(): void {
  catalog.serve(original);
  forgetSpecs();
  forgetAnnouncement();
}

/** The built-ins `find_tools` and `use_tool`, as the product's catalog module gives them. */
export const discoveryTools = productDiscoveryTools;
