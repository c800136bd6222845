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
