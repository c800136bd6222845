/**
 * No two folders of src/ import each other by value. Type-only imports are left out (they vanish
 * when compiled, and `env.ts` must name the Durable Object classes it binds), so this rule has a
 * configuration of its own; the other rules of the house are in .dependency-cruiser.cjs. Lint
 * applies it in scripts/layout-graph.mjs, whose cruise draws docs/layout.md's graph from the same
 * view.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const base = require("./.dependency-cruiser.cjs");

module.exports = {
  forbidden: [
    {
      name: "no-folder-cycles",
      comment:
        "Folders form layers: when a imports b, b never imports a (directly or around a loop). Move the shared part to the lower folder instead.",
      severity: "error",
      scope: "folder",
      from: { path: "^src/" },
      to: { circular: true },
    },
  ],
  options: { ...base.options, tsPreCompilationDeps: false },
};
