import { readFileSync } from "node:fs";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/** Reads KEY=value lines of a .dev.vars file; tests use the committed example, never real secrets. */
function readDevVars(path: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match?.[1] && match[2] !== undefined) vars[match[1]] = match[2];
  }
  return vars;
}

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml", environment: "sandbox" },
      miniflare: {
        bindings: {
          ...readDevVars(".dev.vars.example"),
          SANDBOX_ADMIN_TOKEN: "sandbox-admin-demo-token",
          // How many sequences the model-based test runs (`npm run soak`); empty means its CI share.
          SOAK_RUNS: process.env.SOAK_RUNS ?? "",
        },
        workers: [
          {
            // The sandbox upstream runs as a real second worker, prebuilt by `npm run build:sandbox`.
            name: "edge-tool-proxy-sandbox-upstream",
            modules: true,
            scriptPath: "./dist/sandbox/index.js",
            compatibilityDate: "2026-04-20",
            durableObjects: { STORE: { className: "SandboxStore", useSQLite: true } },
            bindings: readDevVars("sandbox/.dev.vars.example"),
          },
        ],
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    // Browser tests drive Chromium from Node against `wrangler dev`: vitest.browser.config.ts.
    exclude: ["test/browser/**", "node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
