/**
 * The rules of the house, checked by `npm run lint`: which folder of src/ may import which. Each
 * folder answers one question (docs/layout.md); these rules keep the answers from blurring.
 * Type-only imports count here (a pure stage must not even name a storage type); the folder-cycle
 * rule, which counts imports by value, lives in .dependency-cruiser-cycles.cjs.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: "leaves-import-no-folder",
      comment:
        "core/ (general helpers) and wire/ (the payload schemas) are the leaves every folder may use; core/ imports nothing else of ours and wire/ only core/ (lazily, for schemas built on first use), so they can never pull a layer in with them.",
      severity: "error",
      from: { path: "^src/(core|wire)/" },
      to: { path: "^src/", pathNot: ["^src/$1/", "^src/core/"] },
    },
    {
      name: "pure-stages-reach-no-storage",
      comment:
        "The call's decisions (machine/), shaping and the rules of effects across runs (effects/) are pure: they return what to write and send, and the ledger applies it. They import no Durable Object storage, no cloudflare: module and no Hono.",
      severity: "error",
      from: { path: "^src/(machine|shaping|effects)/" },
      to: { path: ["^src/ledger/", "^cloudflare:", "(^|/)node_modules/hono/", "^hono"] },
    },
    {
      name: "effects-rules-are-pure",
      comment:
        "effects/ holds the rules of effects across runs that a run's ledger and the tenant's effect shards both apply (a claim, its fates, the caps' arithmetic, what a shard decides of a reservation): the objects read their rows and hand the rules what they read, so the rules run in Node as they are. They import no module of ledger/, no cloudflare: module, no Hono, and not the environment (src/env.ts): what a rule needs is passed to it.",
      severity: "error",
      from: { path: "^src/effects/" },
      to: { path: ["^src/ledger/", "^src/env\\.ts$", "^cloudflare:", "(^|/)node_modules/hono/", "^hono"] },
    },
    {
      name: "ledger-makes-no-decisions",
      comment:
        "The run ledger stores, commits and rings its alarm; what a call, a decision or a send comes to is the machine's, called by the workflows that hand the ledger their writes. So ledger/ names the machine's state shapes, the run's status view, its tool lookups and the alarm's timing (run-state, run-status, grants, run-events, record) and no decision: admit, decide, settle, edit, writes, certainty, the in-doubt rules, budgets, limits, policy, validation, taint or shaping.",
      severity: "error",
      from: { path: "^src/ledger/" },
      to: {
        path: "^src/machine/(admit|decide|settle|edit|late-decision|writes|certainty|in-doubt|budget|limit|policy|prepare|validate|resolve|taint|shape|answers|request)\\.ts$",
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "machine-is-pure",
      comment:
        "machine/ holds the call's decisions as pure functions: what to admit, decide, settle and write, the request to store, the shape of a result. It names nothing that reaches outside the Worker or past its inputs (the environment, storage, upstreams, egress, scenarios, the catalog this deployment serves, HTTP, MCP, the console), not even as a type; what it needs of them, its caller passes in.",
      severity: "error",
      from: { path: "^src/machine/" },
      to: {
        path: [
          "^src/env\\.ts$",
          "^src/(ledger|upstream|egress|scenarios|tools|generated|http|routes|mcp|console|door|workflow|oauth|auth|metrics)/",
          "(^|/)node_modules/hono/",
          "^hono",
          "(^|/)node_modules/@modelcontextprotocol/",
          "^@modelcontextprotocol",
          "^cloudflare:",
        ],
      },
    },
    {
      name: "machine-takes-catalog-and-tenants-as-arguments",
      comment:
        "machine/ may name the catalog's and the tenants' types, but never loads the catalog or the configuration itself: the caller resolves the tool, the run's tools and the tenant and passes them in.",
      severity: "error",
      from: { path: "^src/machine/" },
      to: {
        path: ["^src/catalog/catalog\\.ts$", "^src/config/(load|tenants)\\.ts$"],
        dependencyTypesNot: ["type-only"],
      },
    },
    {
      name: "upstream-credentials-are-issued-once",
      comment:
        "Every credential an upstream receives is issued by upstream/authorize.ts, for a run's dispatch and an operator's read alike (upstream/operator-read.ts): nothing else signs one, so their lifetime and scope have one rule.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/upstream/(authorize|credential)\\.ts$"] },
      to: { path: "^src/upstream/credential\\.ts$", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "workflows-reach-storage-through-ports",
      comment:
        "A run's workflows (workflow/) take a narrow ports contract (workflow/ports.ts) from the run ledger instead of reaching into it: no module of ledger/ but its RPC contract (ledger-api.ts, types only), no cloudflare: module. So a workflow runs in Node over fake ports.",
      severity: "error",
      from: { path: "^src/workflow/" },
      to: { path: ["^src/ledger/", "^cloudflare:"], pathNot: "^src/ledger/ledger-api\\.ts$" },
    },
    {
      name: "only-ledger-is-a-durable-object",
      comment:
        "Durable Objects and their storage live in ledger/; elsewhere cloudflare:workers is reached only for waitUntil, by the health counters that are sent after the answer.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/ledger/", "^src/metrics/record\\.ts$"] },
      to: { path: "^cloudflare:" },
    },
    {
      name: "wire-speaks-no-http",
      comment: "Payload schemas are zod only: the same schema serves REST, MCP and the OpenAPI document.",
      severity: "error",
      from: { path: "^src/wire/" },
      to: { path: ["(^|/)node_modules/hono/", "^hono", "@modelcontextprotocol"] },
    },
    {
      name: "the-door-is-below-the-routes",
      comment:
        "door/ is the one entry of REST and MCP; the routes and the MCP endpoint call it, never the other way.",
      severity: "error",
      from: { path: "^src/door/" },
      to: { path: ["^src/routes/", "^src/mcp/", "^src/console/"] },
    },
    {
      name: "generated-code-is-data",
      comment:
        "src/generated/ is what `npm run tools -- compile` writes (declarations as data, schemas as zod code, parsed tables): it names our types but runs none of our code but core/'s, so what it holds is decided by compile's checks, not by code loaded beside it.",
      severity: "error",
      from: { path: "^src/generated/" },
      to: { path: "^src/", pathNot: ["^src/generated/", "^src/core/"], dependencyTypesNot: ["type-only"] },
    },
    {
      name: "src-never-imports-tests-or-tools",
      severity: "error",
      from: { path: "^src/" },
      to: { path: ["^test/", "^scripts/", "^bench/", "^eval/", "^agents/", "^demo/"] },
    },
    {
      name: "not-to-unresolvable",
      comment: "An import that resolves to no file is a typo or a missing package.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true, pathNot: "^cloudflare:" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".js", ".mjs", ".json"],
    },
    reporterOptions: {
      dot: { collapsePattern: "^src/[^/]+/" },
    },
  },
};
