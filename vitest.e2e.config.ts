import { defineConfig } from "vitest/config";

/**
 * End-to-end tests run in plain Node, not in workerd: each follows a path a newcomer takes (the
 * commands of README.md and docs/ on a fresh copy of the project) and starts what that path starts, `npm start`
 * included, on loopback.
 */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 60_000,
  },
});
