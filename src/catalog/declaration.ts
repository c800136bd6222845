import * as z from "zod";
import { SIDE_EFFECTS } from "../wire/side-effect";
import { CredentialSchema, HttpCredentialSchema } from "./declaration-credentials";
import { MAX_LISTED_TOOLS } from "./default-tools";
import { MAX_INLINE_RESULT_BYTES } from "./define-tool";
import { instantOf } from "./deprecation";
import { EFFECT_WINDOW_MS } from "./effect-rules";

/**
 * The declaration format of `catalog/<namespace>.yaml`: a namespace's tools as data. This schema is
 * the one source: `npm run tools -- compile` writes `catalog/schema.json` from it (for editors) and
 * `check` validates every file with it. The Worker only names its types; it never parses YAML and
 * never runs this schema (the compiled module it imports was checked at build time).
 */

const IDENTIFIER = /^[a-z][a-z0-9_]*$/;
const JSON_POINTER = /^(?:\/(?:[^~/]|~[01])*)*$/;

/** A JSON Schema, kept as data: `compile` writes it as zod code (scripts/tools/zod-source.ts). */
const JsonSchemaSchema = z.record(z.string(), z.unknown());

/** `{ arg: /pointer }`: the value of the call's argument at that JSON pointer. */
const ArgRefSchema = z.strictObject({
  arg: z.string().regex(JSON_POINTER, "a JSON pointer such as /order_id"),
});
/** `{ result: /pointer }`: the value at that pointer in the write's validated result. */
const ResultRefSchema = z.strictObject({
  result: z.string().regex(JSON_POINTER, "a JSON pointer such as /refund_id"),
});
const RefSchema = z.union([ArgRefSchema, ResultRefSchema]);
/** One value a postcondition expects: an argument, a result value, or a literal. */
const ExpectedValueSchema = z.union([ArgRefSchema, ResultRefSchema, z.strictObject({ value: z.unknown() })]);
/**
 * What a postcondition expects at an observed path: that value, or (`contains`) a list holding an
 * element whose every named path has its expected value (a refund among an order's refunds).
 */
const ExpectedSchema = z.union([
  ExpectedValueSchema,
  z.strictObject({ contains: z.record(z.string(), ExpectedValueSchema) }),
]);

const DescriptionSchema = z.strictObject({
  does: z.string(),
  use_when: z.string(),
  avoid_when: z.string(),
  side_effects: z.string(),
});

const BaseUrlSchema = z
  .string()
  .regex(
    /^https?:\/\/[^\s/?#]+(?:\/[^\s?#]*)?$/,
    "an http(s) URL without query, such as https://api.example.com/v1",
  );

const BaseSchema = z
  .strictObject({
    sandbox: BaseUrlSchema.optional(),
    production: BaseUrlSchema.refine(
      (url) => url.startsWith("https://"),
      "production is reached over https",
    ).optional(),
  })
  .optional();

/**
 * How long an upstream remembers a key it applied. Past it, a resend under the same key is a new
 * effect, so the proxy settles a write in doubt by a read instead of resending it.
 */
const RetentionSchema = z
  .number({ error: "a whole number of seconds" })
  .int("a whole number of seconds")
  .min(1, "at least 1 second")
  .optional();

/** Where an MCP upstream takes the proxy's derived idempotency key. */
export const KEY_CARRIERS = ["meta", "params", "header"] as const;
/** The `_meta` key the derived key travels under, in our own reverse-DNS prefix. */
export const IDEMPOTENCY_META_KEY = "io.edge-tool-proxy/idempotency-key";

/**
 * A Streamable HTTP MCP server whose tools are declared in the namespace like any other, each
 * pinned to the definition a human reviewed.
 */
const McpUpstreamSchema = z.strictObject({
  kind: z.literal("mcp"),
  base: BaseSchema,
  /** The MCP endpoint's path under the base (or the binding). */
  path: z.string().startsWith("/").default("/mcp"),
  /**
   * How the protocol revision is chosen: `auto` probes for 2026-07-28 and falls back to the 2025
   * handshake; `legacy` speaks 2025 only; `2026-07-28` requires it.
   */
  protocol: z.enum(["auto", "legacy", "2026-07-28"]).default("auto"),
  credential: CredentialSchema,
  idempotency: z.strictObject({
    /** Where the key goes: `_meta` under our prefix, `params.idempotencyKey`, the HTTP header, or a tool argument. */
    carriers: z
      .array(z.union([z.enum(KEY_CARRIERS), z.strictObject({ argument: z.string().min(1) })]))
      .min(1)
      .default(["meta", "header"]),
    /**
     * Whether the server applies a write once per key. When false, a write whose outcome is unknown
     * is never sent again: the key stays in doubt until a postcondition read settles it.
     */
    honoured: z.boolean(),
    retention_s: RetentionSchema,
  }),
  /**
   * The longest the server's tool definitions are trusted before they are listed again: the window
   * in which a changed definition can still be served (shorter when the listing's `ttlMs` is, and
   * closed early when the server says `notifications/tools/list_changed`). 0 lists before every call.
   */
  definitions_max_age_s: z.number().int().min(0).max(3600).default(60),
});

/**
 * Whether an HTTP API applies a write once per key, and where it reads the key. Left out, it is
 * undecided: `check` then refuses the namespace's write and destructive tools, because the proxy's
 * exactly-once promise rests on it (docs/guarantees.md).
 */
const HttpIdempotencySchema = z.strictObject({
  /** The request header the API reads the key from. */
  header: z.string().min(1).default("Idempotency-Key"),
  /**
   * Whether a second request under the same key makes no second effect. When false, a write whose
   * outcome is unknown is never resent blindly: a read settles it first (the tool's `settle`).
   */
  honoured: z.boolean({ error: "true or false: does the API apply a write once per key?" }),
  retention_s: RetentionSchema,
});

const HttpUpstreamSchema = z.strictObject({
  kind: z.literal("http").optional(),
  /**
   * The API's base URL per environment. An environment without one binds the upstream by its name
   * in wrangler.toml instead (a service binding in sandbox, a URL var): the sandbox's own APIs.
   */
  base: BaseSchema,
  idempotency: HttpIdempotencySchema.optional(),
  /** Replaced by `idempotency.header`; named here only to say so where it is still written. */
  idempotency_header: z
    .never({
      error: "moved: write idempotency: { header: <this header>, honoured: true or false }",
    })
    .optional(),
  credential: HttpCredentialSchema,
});

const UpstreamSchema = z.union([HttpUpstreamSchema, McpUpstreamSchema]);

/** A remote MCP tool, called as `tools/call` on an `mcp` upstream, only while its definition matches the pin. */
const RemoteRequestSchema = z.strictObject({
  upstream: z.string(),
  /** The tool's name on the server (ours may differ). */
  tool: z.string().min(1),
  /** `sha256:` of the reviewed definition (src/catalog/pin.ts); `npm run tools -- pin` writes it. */
  pin: z.string().regex(/^sha256:[0-9a-f]{64}$/, "sha256: and 64 hex digits, as npm run tools -- pin writes"),
});

const HttpRequestSchema = z.strictObject({
  upstream: z.string(),
  method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
  path: z.string().startsWith("/"),
  query: z.record(z.string(), z.union([z.string(), ArgRefSchema])).optional(),
  /** Any JSON; an object `{ arg: "/pointer" }` anywhere in it stands for that argument. */
  body: z.unknown().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});

const RequestSchema = z.union([HttpRequestSchema, RemoteRequestSchema]);

const MaskRuleSchema = z.enum(["email", "phone", "card", "address", "name", "secret"]);

/** A reviewer's reason, long enough to say something an operator can check. */
const ReasonSchema = z.string().trim().min(12, "give the reason, in a sentence");

const OutputSchema = z.strictObject({
  schema: JsonSchemaSchema,
  untrusted: z.array(z.string()).optional(),
  trusted_text: z.record(z.string(), z.string()).optional(),
  sensitive: z.record(z.string(), MaskRuleSchema).optional(),
  max_result_bytes: z.number().int().positive().max(MAX_INLINE_RESULT_BYTES).optional(),
  /**
   * Parts of the upstream's answer the whitelist leaves out on purpose (a field path such as
   * `items[].owner`), each with why: the importer writes one for every part it could not express,
   * so nothing leaves the answer without a reviewer's word. Documentation: the whitelist strips them.
   */
  omitted: z.record(z.string().min(1), ReasonSchema).optional(),
});

/** The one claim form a policy may name: a top-level claim of the run's user's assertion. */
const USER_CLAIM = /^user\.[A-Za-z_][A-Za-z0-9_]*$/;
const FieldSettingSchema = z.strictObject({ field: z.string(), setting: z.string() });
/** A sentence with `{placeholders}`: each rule names the values it offers (`{value}`, `{limit}`). */
const TextTemplateSchema = z.string().min(1);
const PolicySchema = z.union([
  z.strictObject({ owned_by_tenant: z.string() }),
  z.strictObject({
    max_from_setting: FieldSettingSchema.extend({
      /** The refusal's reason and hint, with `{value}`, `{limit}` and `{field}`. */
      reason: TextTemplateSchema.optional(),
      hint: TextTemplateSchema.optional(),
    }),
  }),
  z.strictObject({
    approval_when: z.union([
      z.strictObject({
        field: z.string(),
        equals: z.union([z.string(), z.number(), z.boolean()]),
        reason: z.string().min(1),
      }),
      z.strictObject({ field: z.string(), at_least_setting: z.string(), reason: z.string().min(1) }),
    ]),
  }),
  /** `reason` may name `{limit}`, the setting's value. */
  z.strictObject({ waive_approval_below: FieldSettingSchema.extend({ reason: TextTemplateSchema }) }),
  /**
   * An argument bounded by a claim of the run's user (`at_most: user.refund_limit_cents`): above it
   * the call waits for a human (`otherwise: approval`, the default) or is refused. A run that acts
   * for no user is not bound by it; a user whose assertion lacks the claim is refused.
   * `reason` may name `{value}`, `{limit}` and `{field}`.
   */
  z.strictObject({
    within_user_claim: z.strictObject({
      field: z.string(),
      at_most: z.string().regex(USER_CLAIM, {
        error:
          'names a claim form this catalog does not know: write "user.<claim>", such as user.refund_limit_cents',
      }),
      otherwise: z.enum(["approval", "refuse"]).default("approval"),
      reason: TextTemplateSchema,
    }),
  }),
]);

const PostconditionSchema = z.strictObject({
  tool: z.string(),
  args: z.record(z.string(), RefSchema),
  expect: z.record(z.string(), ExpectedSchema),
  answer_by_key: z
    .string()
    .regex(/^\/.*\{key\}/, "a path holding {key}, such as /shipments/idempotency-keys/{key}")
    .optional(),
  /** The verdict's message when the read found nothing, with `{args.…}` and `{result.…}`. */
  on_missing: z.strictObject({ message: TextTemplateSchema }).optional(),
  /** The verdict when the read disagrees: its kind (silent_failure by default) and message. */
  on_mismatch: z
    .strictObject({
      verdict: z.enum(["silent_failure", "partial_success"]).optional(),
      message: TextTemplateSchema,
    })
    .optional(),
});

/** A warning beside a fact: when its value is above an observed number, or equals a value. */
const FactWarningSchema = z.union([
  /** `text` may name `{bound}`, the observed number, formatted as the fact is. */
  z.strictObject({ above: z.string(), text: TextTemplateSchema }),
  z.strictObject({ equals: z.union([z.string(), z.number(), z.boolean()]), text: TextTemplateSchema }),
]);
const shownParts = {
  label: z.string().min(1),
  /** `money`: minor units in the currency the decision context's `money` names. */
  format: z.literal("money").optional(),
};
const factParts = {
  ...shownParts,
  /** A fact whose value the read lacks reads "unknown", or is left out (`omit`). */
  if_missing: z.enum(["unknown", "omit"]).optional(),
  warning: FactWarningSchema.optional(),
};
const FactSchema = z.union([
  /** A value of the observed read, at a dotted path. */
  z.strictObject({ ...factParts, path: z.string() }),
  /** An argument of the call. */
  z.strictObject({
    ...factParts,
    arg: z.string().regex(JSON_POINTER, "a JSON pointer such as /amount_cents"),
  }),
  /** An observed list summed up: "none" (`empty`), else "2 · $75.00" (its count and the total of `sum`). */
  z.strictObject({
    ...shownParts,
    list: z.strictObject({ path: z.string(), sum: z.string().optional(), empty: z.string().min(1) }),
  }),
]);

const DecisionContextSchema = z.strictObject({
  tool: z.string(),
  args: z.record(z.string(), ArgRefSchema),
  /** Where the observed read names the currency of `format: money` facts, and the one to assume. */
  money: z
    .strictObject({
      currency: z.string(),
      default_currency: z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 code such as USD"),
    })
    .optional(),
  facts: z.array(FactSchema).min(1),
});

const WINDOW_S = { min: EFFECT_WINDOW_MS.min / 1_000, max: EFFECT_WINDOW_MS.max / 1_000 };

/**
 * The identity of a write's effect across runs: the top-level arguments naming the business thing
 * it changes (an order for a refund), and for how long a second effect on it from another run is a
 * repeat. Without it, the identity is the tool and its whole arguments.
 */
const EffectDeclarationSchema = z.strictObject({
  identity: z
    .array(z.string().min(1))
    .min(1, "names no argument; name at least one, such as [order_id], or leave effect out")
    .superRefine((fields, ctx) => {
      fields.forEach((field, index) => {
        if (fields.indexOf(field) !== index) {
          ctx.addIssue({ code: "custom", path: [index], message: `names "${field}" twice` });
        }
      });
    }),
  window_s: z
    .number({ error: "a whole number of seconds" })
    .int("a whole number of seconds")
    .min(WINDOW_S.min, `at least ${WINDOW_S.min} seconds`)
    .max(WINDOW_S.max, `at most ${WINDOW_S.max} seconds (30 days)`)
    .optional()
    .describe("default 86400 (a day)"),
  per_user: z
    .boolean()
    .optional()
    .describe(
      "The user a run acts for is part of the identity: two users' same call are two effects, one user's repeat across runs is one (default false).",
    ),
});

/** The value a write moves, for the tenant's value caps: an integer argument in a currency's minor unit. */
const ValueDeclarationSchema = z.strictObject({
  field: z.string().min(1),
  currency: z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 code such as USD"),
  /** The argument per-subject caps count for (an order, a customer). */
  subject: z.string().min(1).optional(),
});

/** The longest approval SLA: an approval cannot wait longer than a day anyway (its window). */
const MAX_SLA_S = 24 * 60 * 60;

/**
 * What a human decision about this tool's calls is held to: how long it may wait (`sla_s`), and who
 * may decide it, an operator holding one of `roles` (OPERATOR_KEYS). A tenant may raise the role
 * above amounts and ask for two operators (its `approvers` setting).
 */
const ApprovalDeclarationSchema = z.strictObject({
  sla_s: z
    .number({ error: "a whole number of seconds" })
    .int("a whole number of seconds")
    .min(1, "at least 1 second: an approval's SLA cannot be negative or zero")
    .max(MAX_SLA_S, `at most ${MAX_SLA_S} seconds (a day, an approval's whole window)`)
    .describe(
      "How long an approval of this tool's calls may wait for a decision before it is overdue and the tenant's escalation_role is notified; default: the tenant's approval_sla_s",
    )
    .optional(),
  roles: z
    .array(z.string().regex(IDENTIFIER, "a role is a lowercase identifier such as support_lead"))
    .min(1, "names no role; name at least one, such as [support_lead], or leave roles out")
    .optional(),
});

/**
 * How a write in doubt is settled by reading, when its upstream does not honour keys: a read tool
 * of the namespace lists the effects this call could have made, and the call's own is the one whose
 * fields match its arguments (created at or after its first attempt, when `since` names the field).
 * One found: the call completed; none: it may be sent; more, or a failed read: a human reconciles.
 */
const SettleSchema = z.strictObject({
  tool: z.string(),
  args: z.record(z.string(), ArgRefSchema),
  /** The list in the read's result, as a field path such as `refunds` (postconditions' paths). */
  items: z.string().min(1),
  /** Each item's field (a path such as `amount_cents`) and the value it must have. */
  match: z
    .record(
      z.string().min(1),
      // No result: a write in doubt has none.
      z.union([ArgRefSchema, z.strictObject({ value: z.unknown() })]),
    )
    .refine((match) => Object.keys(match).length > 0, "names no field; name at least one"),
  /** An item's creation time (ISO 8601): items created before the call's first attempt are not its own. */
  since: z.string().min(1).optional(),
  /** The item's field that names the effect, reported when it is found. */
  effect_id: z.string().min(1),
});

/** What `npm run tools -- certify` sends for this tool in the sandbox. */
const CertifySchema = z.strictObject({ args: z.record(z.string(), z.unknown()) });

const dateSchema = (what: string) =>
  z
    .string()
    .refine(
      (value) => !Number.isNaN(instantOf(value)),
      `${what} must be an ISO 8601 day or date-time, such as 2026-09-01 or 2026-09-01T12:00:00Z`,
    );

/** `deprecated:` of a tool's declaration: see `deprecation.ts`. */
const DeprecationSchema = z.strictObject({
  since: dateSchema("since").describe("When the tool was deprecated."),
  sunset: dateSchema("sunset").describe("When calls of it start to be refused; after since."),
  use_instead: z
    .string()
    .min(1)
    .describe("The tool to call instead: a name of this namespace, or namespace.tool."),
  why: z.string().min(12).describe("Why, in a sentence a model and an operator read."),
});

export const ToolDeclarationSchema = z.strictObject({
  name: z.string(),
  version: z.string().min(1),
  title: z.string().min(1),
  side_effect: z.enum(SIDE_EFFECTS, {
    error: (issue) =>
      issue.input === undefined
        ? "side_effect is required: read, draft, write or destructive"
        : `unknown side_effect ${JSON.stringify(issue.input)}; one of ${SIDE_EFFECTS.join(", ")}`,
  }),
  description: DescriptionSchema,
  timeout_ms: z.number().int(),
  /** Reads are retried within their timeout and writes never: the only class there is today. */
  retry: z.literal("default").optional(),
  open_world: z.boolean().optional(),
  input: JsonSchemaSchema,
  /**
   * Input fields (paths such as `filter.key`) whose names or descriptions read like a credential
   * but which are not one, each with why: `check` refuses any other such field, since what a model
   * fills reaches its context and the trace. A real credential is the upstream's, from a secret.
   */
  not_credentials: z.record(z.string().min(1), ReasonSchema).optional(),
  sensitive_args: z.record(z.string(), MaskRuleSchema).optional(),
  request: RequestSchema,
  output: OutputSchema,
  policies: z.array(PolicySchema).optional(),
  postcondition: PostconditionSchema.optional(),
  no_postcondition: z.string().optional(),
  /** Write and destructive tools on an upstream that does not honour keys. */
  settle: SettleSchema.optional(),
  certify: CertifySchema.optional(),
  freshness: z.strictObject({ resource: z.string(), version_field: z.string() }).optional(),
  decision_context: DecisionContextSchema.optional(),
  dry_run: z.string().optional(),
  /** Write and destructive tools only. */
  effect: EffectDeclarationSchema.optional(),
  /** Write and destructive tools only. */
  value: ValueDeclarationSchema.optional(),
  approval: ApprovalDeclarationSchema.optional(),
  deprecated: DeprecationSchema.optional(),
});

export const CatalogFileSchema = z.strictObject({
  format: z.literal(1),
  namespace: z.string().regex(IDENTIFIER, "a lowercase identifier such as shipping"),
  upstreams: z.record(z.string().regex(/^[A-Z][A-Z0-9_]*$/), UpstreamSchema),
  /**
   * The tools a run opened without a subset lists (required of a namespace of more than
   * MAX_LISTED_TOOLS tools); it finds the others with `find_tools` and calls them with `use_tool`.
   */
  default_tools: z
    .array(z.string())
    .min(1, "names no tool; name the ones most runs need, or leave default_tools out")
    .max(MAX_LISTED_TOOLS, `at most ${MAX_LISTED_TOOLS}: a run lists no more at once`)
    .optional(),
  tools: z.array(ToolDeclarationSchema).min(1),
});

export type CatalogFile = z.infer<typeof CatalogFileSchema>;
export type ToolDeclaration = z.infer<typeof ToolDeclarationSchema>;
export type PolicyDeclaration = z.infer<typeof PolicySchema>;
export type Expected = z.infer<typeof ExpectedSchema>;
export type SettleDeclaration = z.infer<typeof SettleSchema>;
export type ExpectedValue = z.infer<typeof ExpectedValueSchema>;
export type FactDeclaration = z.infer<typeof FactSchema>;
export type DecisionContextDeclaration = z.infer<typeof DecisionContextSchema>;
