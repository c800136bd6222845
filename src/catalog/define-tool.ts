import type * as z from "zod";
import type { TenantConfig } from "../config/tenants";
import type { MaskRule } from "../shaping/mask";
import type { EnvironmentName } from "../wire/envelope";
import type { RunUser } from "../wire/run-user";
import type { SIDE_EFFECTS } from "../wire/side-effect";
import type { PolicyDeclaration } from "./declaration";
import type { Deprecation } from "./deprecation";
import { defaultEffect, type EffectIdentity, type EffectValue } from "./effect-identity";

/**
 * What calling a tool does to the world; it decides retries, idempotency keys and approvals.
 * `read` changes nothing; `draft` prepares an effect without making it (it stores something, such
 * as an email draft, that a later call acts on); `write` makes a reversible change; `destructive`
 * makes one that cannot be undone and waits for a human.
 */
export type SideEffect = (typeof SIDE_EFFECTS)[number];

/**
 * The four parts a model needs to choose a tool well. Each part is written for the model,
 * in full sentences, with concrete examples of arguments where they help.
 */
export interface ToolDescription {
  does: string;
  use_when: string;
  avoid_when: string;
  side_effects: string;
}

/** The HTTP request a tool call becomes, relative to the tool's upstream binding. */
export interface UpstreamRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  /** Literal extra headers (an API version); never the credential or the idempotency key. */
  headers?: Record<string, string>;
}

/** Where a remote MCP server takes the derived idempotency key. */
export type KeyCarrier = "meta" | "params" | "header" | { argument: string };

/** A Streamable HTTP MCP server, as the tools declared on it share it. */
export interface McpServer {
  /** The upstream's declared name: the key its sessions and definitions are kept under per isolate. */
  name: string;
  /** The endpoint's path under the base URL or binding. */
  path: string;
  protocol: "auto" | "legacy" | "2026-07-28";
  /** The `aud` of the proxy's per-request JWT; null when the server takes no JWT (none, or a static key). */
  audience: string | null;
  carriers: readonly KeyCarrier[];
  /** Whether the server applies a write once per key; when not, a write in doubt is never resent. */
  honoured: boolean;
  /** The longest its `tools/list` is trusted before it is listed again. */
  definitions_max_age_ms: number;
}

/** A tool of a remote MCP server: called as `tools/call`, only while its definition matches the pin. */
export interface RemoteTool {
  server: McpServer;
  /** The server's name for the tool. */
  tool: string;
  /** `sha256:` of the reviewed definition (src/catalog/pin.ts). */
  pin: string;
}

/**
 * How the proxy proves itself to a tool's upstream. By default (none declared) the per-dispatch
 * Ed25519 JWT of src/upstream/credential.ts; `static_header` sends a Workers secret's value in a
 * header instead, for APIs that take only an API key.
 */
export interface StaticHeaderCredential {
  kind: "static_header";
  header: string;
  /** The Workers secret holding the value; its value never appears in the catalog. */
  secret: string;
  prefix: string;
}

/** A Workers secret's value in a query parameter, for APIs that read their key there. */
export interface StaticQueryCredential {
  kind: "static_query";
  param: string;
  /** The Workers secret holding the value; added to each attempt's URL only as it is sent. */
  secret: string;
}

/** A credential sent from a Workers secret, in place of the proxy's JWT. */
export type StaticCredential = StaticHeaderCredential | StaticQueryCredential;

/**
 * A policy's say on human approval. Destructive calls need an approval unless a policy waives it;
 * a policy can also demand one for any call. A demand always wins over a waiver.
 */
export interface ApprovalRule {
  required: boolean;
  reason: string;
}

/** Why a policy refused a call, phrased so the model can act on it; or an allowance, maybe with an approval rule. */
export type PolicyDecision =
  | { allow: true; approval?: ApprovalRule }
  | { allow: false; field: string; reason: string; hint: string };

export interface PolicyContext {
  tenantId: string;
  tenant: TenantConfig;
  /** Whom the run acts for (verified when it opened); null or absent: no one named. */
  user?: RunUser | null;
}

export type ToolPolicy<Args> = (args: Args, ctx: PolicyContext) => PolicyDecision;

/**
 * What a postcondition concluded from its observation of the world after a claimed success.
 * `side_effect_confirmed` is what the observation showed of the effect: false when the read found
 * no trace of it, true when it found it (but not all of it). Defaults to false for
 * `silent_failure`, true for `partial_success`.
 */
export type Verdict =
  | { ok: true }
  | {
      ok: false;
      code: "silent_failure" | "partial_success";
      message: string;
      side_effect_confirmed?: boolean;
    };

/**
 * A read that checks a write really happened: after a claimed success the proxy calls `tool` (a
 * read tool of the same namespace, sent with that tool's own credential) with `args(...)` and lets
 * `verify` compare what it sees with what was claimed. `observed` is the read's shaped result, or
 * `null` when the read answered that the thing does not exist (`not_found`): absence is an
 * observation too.
 */
export interface Postcondition<Args, Result> {
  tool: string;
  args: (args: Args, result: Result) => Record<string, unknown>;
  verify: (args: Args, result: Result, observed: unknown) => Verdict;
  /**
   * Where the upstream keeps its answer to an idempotency key (a path, read with GET and this
   * tool's own credential). When a success arrives unreadable (cut off, not JSON), the claim is
   * recovered from it and verified as above; without it such an answer stays in doubt.
   */
  answer_by_key?: (key: string) => string;
}

/** One line of what an operator reads before deciding: "Still refundable: $12.50". */
export interface DecisionFact {
  label: string;
  value: string;
  /** Set when the fact argues against approving (the amount exceeds what is left, the order is closed). */
  warning?: string;
}

/**
 * What an operator needs to judge an approval of this tool, read fresh when the approval page is
 * shown: `tool` (a read tool of the same namespace, sent with its own credential) is called with
 * `args(...)`, and `facts` turns the call's arguments and that read's shaped result into lines
 * such as the order's total, the refunds already issued and what is still refundable.
 */
export interface DecisionContext<Args> {
  tool: string;
  args: (args: Args) => Record<string, unknown>;
  facts: (args: Args, observed: unknown) => DecisionFact[];
}

/** Where a result's resource version lives, so an answer older than one already seen is flagged stale. */
export interface Freshness<Result> {
  resource: (result: Result) => string;
  version: (result: Result) => number;
}

/** An input schema: a zod object whose fields the model fills. */
export type InputSchema = z.ZodObject<z.ZodRawShape>;

export interface ToolDefinition<Input extends InputSchema, Output extends z.ZodType> {
  /** `verb_noun` in snake_case: the side effect must be visible in the name. */
  name: string;
  namespace: string;
  /** Bumped whenever the contract (arguments, output, meaning) changes. */
  version: string;
  /** A short human title shown in consoles and MCP clients. */
  title: string;
  side_effect: SideEffect;
  description: ToolDescription;
  /** Strict: unknown fields are errors, and every field carries a description. */
  input: Input;
  /** The whitelist: only what it names reaches the model. */
  output: Output;
  upstream: {
    /** The name of the binding in `wrangler.toml` that decides where this tool's calls go. */
    binding: string;
    /** A base URL per environment, declared with the upstream; it takes the binding's place there. */
    base?: Partial<Record<EnvironmentName, string>>;
    request: (args: z.infer<Input>) => UpstreamRequest;
    credential?: StaticCredential;
    /** Set for a remote MCP tool: `request` then describes the `tools/call` it becomes. */
    remote?: RemoteTool;
    /** What the upstream promises about the derived key; absent: the `Idempotency-Key` header, honoured. */
    idempotency?: KeyPromise;
  };
  /** How a write in doubt is settled by reading when its upstream does not honour keys. */
  settle?: SettleRead;
  /**
   * Hard limit of one upstream attempt; the request is aborted when it passes. A read's is relaxed
   * (at least 10 s; up to 3 attempts within the run's deadline), a keyed call's strict (at most
   * 10 s; one attempt): the catalog rule of `timeout-rules.ts`.
   */
  timeout_ms: number;
  /** Business rules checked after the schema, before anything is dispatched. */
  policy?: readonly ToolPolicy<z.infer<Input>>[];
  /**
   * Whether the tool reaches beyond the tenant's own systems (web, email to strangers). MCP's
   * `openWorldHint` is also true for any tool with `untrusted` output fields (`src/specs/mcp.ts`).
   */
  open_world?: boolean;
  /** Result fields masked for the model, the operators and the trace: path → rule. */
  sensitive?: Readonly<Record<string, MaskRule>>;
  /** Argument fields masked in the trace and the console: path → rule. */
  sensitive_args?: Readonly<Record<string, MaskRule>>;
  /**
   * Result fields holding third-party text (customer messages, notes, documents an outsider can
   * edit): normalised, fenced with the run's marker, and reading any of them taints the run.
   */
  untrusted?: readonly string[];
  /**
   * Free-text result fields that are not third-party text, each with the reason: path → reason.
   *
   * The catalog rule a reader can check: every **free-text field** of the output schema must be
   * classified. A free-text field is a `z.string()` leaf (inside objects, arrays, optional,
   * nullable, default) with no `.regex(...)` and no string format (`z.iso.datetime()`,
   * `z.email()`, ...); enums and literals are not free text. Each one is listed in `untrusted`,
   * listed here with a non-empty reason, or masked by a `sensitive` rule (a masked value keeps one
   * letter per word, too little to carry an instruction). A `sensitive` path covers its subtree.
   */
  trusted_text?: Readonly<Record<string, string>>;
  /** Largest result (bytes of shaped JSON) returned inline; larger ones get a summary and a handle. */
  max_result_bytes?: number;
  /**
   * The postcondition: required of every write and destructive tool unless `no_postcondition`
   * says why there is nothing to read back.
   */
  observe?: Postcondition<z.infer<Input>, z.infer<Output>>;
  /**
   * Why a write or destructive tool has no postcondition, in a sentence an operator can check
   * (e.g. the upstream offers no read of what it did). Only allowed when `observe` is absent.
   */
  no_postcondition?: string;
  freshness?: Freshness<z.infer<Output>>;
  /** What an operator sees beside the arguments when a call of this tool waits for approval. */
  decision_context?: DecisionContext<z.infer<Input>>;
  /**
   * What a dry run cannot show, for write and destructive tools: what the sandbox binding
   * simulates and what only production reveals, in a sentence or two.
   */
  dry_run?: string;
  /** The identity of its effect across runs (write and destructive only); default: tool + arguments. */
  effect?: EffectIdentity;
  /** The value its effect moves (write and destructive only), for the tenant's value caps. */
  value?: EffectValue;
  /** How long an approval of its calls may wait before it is overdue and escalated; default: the tenant's. */
  approval_sla_ms?: number;
  /** The roles whose approval of its calls counts (OPERATOR_KEYS); any operator of the tenant without. */
  approval?: { roles: readonly string[] };
  /**
   * Whether a run opened without a subset lists it, in a namespace that declares a default set
   * (`default-tools.ts`); the namespace's other tools are found with `find_tools`.
   */
  listed_by_default?: boolean;
  /** On its way out: a notice until its sunset, refused after it (`deprecation.ts`). */
  deprecated?: Deprecation;
}

/** What a built-in tool may read: the run's own pages of results too large to return inline. */
export interface RunPages {
  /** One stored page, or null when the handle or cursor names nothing of this run. */
  page(handle: string, cursor: number): unknown;
}

/** A built-in tool's answer: data, or a failure the model can act on. */
export type BuiltinAnswer = { ok: true; data: unknown } | { ok: false; failure: BuiltinFailure };

/** The failure of a built-in tool, in the envelope's terms (structurally a `FailureSpec`). */
export interface BuiltinFailure {
  code: "not_found" | "validation_error";
  message: string;
  problems?: Array<{ field: string; reason: string; hint: string }>;
}

/**
 * How the proxy answers a built-in tool from the run's own storage: no upstream, no key, no
 * effect, in every environment alike.
 */
export type BuiltinHandler = (
  args: Record<string, unknown>,
  pages: RunPages,
  /** The tools the tenant grants the run (what `find_tools` searches). */
  granted: readonly ToolSpec[],
) => BuiltinAnswer;

/**
 * What an upstream promises about the key the proxy derives, and how the proxy knows it. The
 * exactly-once promise stands on two legs: the key, and an upstream that applies it once. The second
 * is the upstream's; the proxy promises no more than it was told (`declared`) or shown (`certified`).
 */
export interface KeyPromise {
  /** The request header the key travels in. */
  header: string;
  /** Whether a resend under the same key makes no second effect: declared, and not refuted. */
  honoured: boolean;
  /**
   * `certified`: `npm run tools -- certify` showed it for this declaration; `declared`: the catalog
   * says so; `refuted`: declared, but a certification saw a second effect under one key (then
   * `honoured` is false); `undecided`: nobody said (an upstream of reads only).
   */
  basis: "certified" | "declared" | "refuted" | "undecided";
  /** How long the upstream remembers a key; null: as long as the proxy keeps it. */
  retention_ms: number | null;
  /** When the certification behind a `certified` or `refuted` basis ran (ISO 8601). */
  evidence_at?: string;
}

/** What a settling read concluded about a write in doubt. */
export type SettleVerdict =
  | { kind: "found"; effect_id: string }
  | { kind: "absent" }
  /** More than one effect matches, or the read's answer does not have the declared shape. */
  | { kind: "unclear"; why: string };

/**
 * A read that finds a write's effect by its business identity, for an upstream that does not honour
 * keys: what is sent (a read tool of the namespace, with arguments from the call's) and how its
 * answer is judged. `firstSentAt` is when the call was first sent: an effect made before it is not
 * this call's.
 */
export interface SettleRead {
  tool: string;
  args: (args: Record<string, unknown>) => Record<string, unknown>;
  judge: (args: Record<string, unknown>, observed: unknown, firstSentAt: number) => SettleVerdict;
}

/** A tool as the catalog stores it, with its argument types erased. */
export interface ToolSpec {
  name: string;
  namespace: string;
  version: string;
  title: string;
  side_effect: SideEffect;
  description: ToolDescription;
  input: InputSchema;
  output: z.ZodType;
  /** Where its calls go; null for a built-in tool, which the proxy answers itself (`builtin`). */
  upstream: {
    binding: string;
    base?: Partial<Record<EnvironmentName, string>>;
    request: (args: Record<string, unknown>) => UpstreamRequest;
    credential?: StaticCredential;
    remote?: RemoteTool;
    idempotency?: KeyPromise;
  } | null;
  settle: SettleRead | null;
  /** The proxy's own handler of a built-in read tool; null for every tool that goes upstream. */
  builtin: BuiltinHandler | null;
  timeout_ms: number;
  policy: readonly ToolPolicy<Record<string, unknown>>[];
  open_world: boolean;
  sensitive: Readonly<Record<string, MaskRule>>;
  sensitive_args: Readonly<Record<string, MaskRule>>;
  untrusted: readonly string[];
  trusted_text: Readonly<Record<string, string>>;
  max_result_bytes: number;
  observe: Postcondition<Record<string, unknown>, unknown> | null;
  no_postcondition: string | null;
  freshness: Freshness<unknown> | null;
  decision_context: DecisionContext<Record<string, unknown>> | null;
  dry_run: string | null;
  /** The business thing a write or destructive call changes; null for reads and drafts. */
  effect: EffectIdentity | null;
  /** The value a write or destructive call moves, when it declares one. */
  value: EffectValue | null;
  /** How long an approval of its calls may wait before it is overdue; null: the tenant's default. */
  approval_sla_ms: number | null;
  /** The roles whose approval counts; empty: any operator of the tenant (a tenant may raise it). */
  approval_roles: readonly string[];
  /** In its namespace's default set: what a run opened without a subset lists (`default-tools.ts`). */
  listed_by_default: boolean;
  deprecated?: Deprecation | null;
  /** What a declared tool's functions were made from, as its version reads them (`tool-version.ts`). */
  declared?: DeclaredRules | null;
}

/** A declared tool's request mapping, policies, postcondition, ... as declared (catalog/*.yaml). */
export interface DeclaredRules {
  request: unknown;
  policies: readonly PolicyDeclaration[];
  postcondition: unknown;
  freshness: unknown;
  decision_context: unknown;
  settle: unknown;
}

/** Results up to this size are returned inline unless the tool says otherwise. */
export const DEFAULT_MAX_RESULT_BYTES = 16 * 1024;

/**
 * The most a tool may return inline. An inline result is kept in the call's record under its key
 * and sent in one envelope: past this, a kept row nears what the run's storage takes and a model's
 * context fills with one answer, so a larger result is paged behind a handle instead.
 */
export const MAX_INLINE_RESULT_BYTES = 256 * 1024;

/**
 * Declares a tool. Types flow from the input schema into the request mapping and policies;
 * the rules that types cannot express are enforced when the catalog loads.
 *
 * @example
 * const lookupOrder = defineTool({
 *   name: "lookup_order", namespace: "support", version: "1", title: "Look up an order",
 *   side_effect: "read", description: { does: "...", use_when: "...", avoid_when: "...", side_effects: "None." },
 *   input: z.object({ order_id: z.string().describe("Order id such as A1001.") }).strict(),
 *   output: OrderSchema,
 *   upstream: { binding: "ORDERS_API", request: (a) => ({ method: "GET", path: `/orders/${a.order_id}` }) },
 *   timeout_ms: 2500,
 * });
 */
export function defineTool<Input extends InputSchema, Output extends z.ZodType>(
  definition: ToolDefinition<Input, Output>,
): ToolSpec {
  // Policies and the request mapping are written against the parsed input type. The catalog only
  // ever hands them arguments that passed `input`, so widening the parameter type is sound.
  return {
    ...definition,
    upstream: definition.upstream as ToolSpec["upstream"],
    builtin: null,
    policy: (definition.policy ?? []) as ToolSpec["policy"],
    open_world: definition.open_world ?? false,
    sensitive: definition.sensitive ?? {},
    sensitive_args: definition.sensitive_args ?? {},
    untrusted: definition.untrusted ?? [],
    trusted_text: definition.trusted_text ?? {},
    max_result_bytes: definition.max_result_bytes ?? DEFAULT_MAX_RESULT_BYTES,
    observe: (definition.observe ?? null) as ToolSpec["observe"],
    no_postcondition: definition.no_postcondition ?? null,
    settle: definition.settle ?? null,
    freshness: (definition.freshness ?? null) as ToolSpec["freshness"],
    decision_context: (definition.decision_context ?? null) as ToolSpec["decision_context"],
    dry_run: definition.dry_run ?? null,
    effect: definition.effect ?? defaultEffect(definition.side_effect),
    value: definition.value ?? null,
    approval_sla_ms: definition.approval_sla_ms ?? null,
    approval_roles: definition.approval?.roles ?? [],
    listed_by_default: definition.listed_by_default ?? false,
  };
}

/**
 * Declares a built-in tool: a read the proxy answers itself with `handler`, from the run's own
 * storage, in every environment alike. It has no upstream, so it names no binding.
 */
export function defineBuiltinTool<Input extends InputSchema, Output extends z.ZodType>(
  definition: Omit<ToolDefinition<Input, Output>, "upstream" | "side_effect">,
  handler: BuiltinHandler,
): ToolSpec {
  const tool = defineTool({
    ...definition,
    side_effect: "read",
    upstream: { binding: "", request: () => ({ method: "GET", path: "/" }) },
  });
  return { ...tool, upstream: null, builtin: handler };
}
