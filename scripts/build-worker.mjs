// Builds the production proxy (wrangler.toml's [env.production.build] command, which
// `wrangler deploy --env production` runs first): src/index.ts bundled by esbuild with code
// splitting into dist/worker/, one main module (index.mjs) and chunks.
// What the Worker imports dynamically on first use (src/http/lazy.ts, the OAuth provider in
// src/oauth/entry.ts) lands in chunks that the main module does not contain, so an isolate parses
// only the code a tool call needs when it starts. wrangler uploads the chunks beside the main module
// (`find_additional_modules`: every .mjs under dist/worker/) and does not bundle again (`no_bundle`).
// The options are wrangler 4's own for a deploy: its build conditions, ES2024, ESM, minified without
// kept names, a source map per module, process.env.NODE_ENV replaced.
//
//   node scripts/build-worker.mjs [--outdir dist/worker] [--metafile]
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { root } from "./local-stack.mjs";

const { values: opts } = parseArgs({
  options: {
    outdir: { type: "string", default: join(root, "dist", "worker") },
    // Writes esbuild's metafile to <outdir>/meta.json: which inputs went into which module.
    metafile: { type: "boolean", default: false },
  },
});

// A stale chunk of an earlier build would be uploaded too: start from an empty folder.
rmSync(opts.outdir, { recursive: true, force: true });
const nodeEnv = JSON.stringify(process.env.NODE_ENV || "production");
try {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { index: join(root, "src", "index.ts") },
    outdir: opts.outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    target: "es2024",
    supported: { "import-source": true },
    conditions: ["workerd", "worker", "browser"],
    platform: "browser",
    external: ["cloudflare:*"],
    define: {
      "process.env.NODE_ENV": nodeEnv,
      "global.process.env.NODE_ENV": nodeEnv,
      "globalThis.process.env.NODE_ENV": nodeEnv,
    },
    minify: true,
    keepNames: false,
    sourcemap: true,
    legalComments: "none",
    logLevel: "warning",
    metafile: opts.metafile,
  });
  if (result.metafile) writeFileSync(join(opts.outdir, "meta.json"), JSON.stringify(result.metafile));
} catch {
  // esbuild has printed the errors, located.
  console.error("build-worker: the proxy did not build");
  process.exit(1);
}
