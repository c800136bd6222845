import { defineConfig } from "vitest/config";

/**
 * Browser tests run in plain Node, not in workerd: they start the proxy and its sandbox with
 * `wrangler dev` on loopback and drive Debian's Chromium against it with playwright-core.
 */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    // One wrangler dev and one Chromium at a time is plenty for this machine.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
