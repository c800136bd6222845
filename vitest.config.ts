import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig, type Plugin } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { wrapHarnessPrototypesOnce } from "./test/pool-prototype-fix";
import { soakFactor } from "./test/property-plan";

// Before any runtime starts: a runtime that serves many files must not slow with each (see there).
wrapHarnessPrototypesOnce();

/**
 * Durable Object storage in memory: Miniflare keeps a runtime's storage in a folder of the OS's
 * temporary directory, where SQLite writes each commit through to the disk; on a RAM file system the
 * tests stop waiting on it (eight files' tests: 15 s against 30 s). A machine without one, or a
 * TMPDIR set on purpose, keeps its own.
 */
const MEMORY_FILE_SYSTEM = "/dev/shm";
if (!process.env.TMPDIR && existsSync(MEMORY_FILE_SYSTEM)) process.env.TMPDIR = MEMORY_FILE_SYSTEM;

/** Reads KEY=value lines of a .dev.vars file; tests use the committed example, never real secrets. */
function readDevVars(path: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match?.[1] && match[2] !== undefined) vars[match[1]] = match[2];
  }
  return vars;
}

const SANDBOX_WORKER = "edge-tool-proxy-sandbox-upstream";

/** The proxy in workerd, with the sandbox upstream as a real second worker. */
function workerdPool() {
  return cloudflareTest({
    wrangler: { configPath: "./wrangler.toml", environment: "sandbox" },
    miniflare: {
      bindings: {
        ...readDevVars(".dev.vars.example"),
        SANDBOX_ADMIN_TOKEN: "sandbox-admin-demo-token",
        // An open listen stream asks which catalog is live this often, so a test sees a change at once.
        CATALOG_WATCH_MS: "40",
        // How many sequences the model-based test runs (`npm run soak`); empty means its CI share.
        SOAK_RUNS: process.env.SOAK_RUNS ?? "",
        // The seed of a soak to replay (`SOAK_SEED=… npm run soak`); empty means a fresh one.
        SOAK_SEED: process.env.SOAK_SEED ?? "",
        // How many times its CI share each property runs in a soak (test/property-plan.ts).
        SOAK_FACTOR: process.env.SOAK_FACTOR ?? "",
      },
      // The sandbox's store, so a test can end an idempotency lease instead of waiting it out.
      durableObjects: { SANDBOX_STORE: { className: "SandboxStore", scriptName: SANDBOX_WORKER } },
      workers: [
        {
          // Prebuilt by `npm run build:sandbox`.
          name: SANDBOX_WORKER,
          modules: true,
          scriptPath: "./dist/sandbox/index.js",
          compatibilityDate: "2026-04-20",
          durableObjects: { STORE: { className: "SandboxStore", useSQLite: true } },
          bindings: readDevVars("sandbox/.dev.vars.example"),
        },
      ],
    },
  });
}

/**
 * Serves the proxy the test catalog of test/workerd/short-timeouts/catalog.ts instead of
 * src/tools/index.ts: the same tools with timeouts short enough that a test can outwait one.
 * Only that module itself still reaches the product catalog, which it derives from.
 */
function shortTimeoutCatalog(): Plugin {
  const product = fileURLToPath(new URL("./src/tools/index.ts", import.meta.url));
  const replacement = fileURLToPath(new URL("./test/workerd/short-timeouts/catalog.ts", import.meta.url));
  return {
    name: "short-timeout-catalog",
    enforce: "pre",
    async resolveId(source, importer, options) {
      if (!importer || importer === replacement || !/(^|\/)tools(\/index(\.ts)?)?$/.test(source)) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      return resolved?.id === product ? replacement : null;
    },
  };
}

/**
 * Tests that wait for a tool's timeout, run against the short-timeout catalog. The model-based test
 * keeps its path (`npm run soak` names it): its slow faults wait for timeouts too.
 */
const SHORT_TIMEOUT_TESTS = [
  "test/workerd/short-timeouts/**/*.test.ts",
  "test/workerd/exactly-once.model.test.ts",
];

/**
 * A soak of the properties (`npm run soak -- --only properties`) runs each SOAK_FACTOR times its CI
 * share, so a test's time limit grows with it; the model-based test sets its own from its plan.
 */
const TEST_TIMEOUT_MS = 30_000 * (soakFactor(process.env) ?? 1);

const WORKERD_TIMEOUTS = { testTimeout: TEST_TIMEOUT_MS, hookTimeout: 30_000 };

/**
 * One workerd serves file after file (`isolate: false`) instead of one runtime per file, which
 * started workerd and imported the Worker's ~500 modules again for each of ~100 files. What a file
 * must not inherit from the one before it, test/workerd/setup.ts wipes before it starts: every
 * Durable Object's storage, and what the isolate remembers of that storage.
 */
const WORKERD_SHARED = { isolate: false, setupFiles: ["./test/workerd/setup.ts"] };

/**
 * The projects in the order their files start: the two workerd projects first, the one with the
 * longest file (the model-based test) before the other, so a runtime's start and the Worker's
 * import overlap another runtime's tests; then the unit files, quick to start and short, which fill
 * the end while the last workerd files finish. Each project's files stay together, so a runtime
 * goes on to its project's next file instead of being stopped for another project's.
 */
const PROJECT_ORDER = ["workerd-short-timeouts", "workerd", "unit"];

/**
 * Files that abort every Durable Object (`abortAllDurableObjects`) run last in their project: workerd
 * keeps an aborted object's storage out of reach of the reset that starts the next file until the
 * object runs again, and which objects stay unused cannot be known (test/workerd/setup.ts wakes
 * those a test restarted one by one). Nothing runs after them on their runtime.
 */
const ABORTS_EVERY_OBJECT = ["test/workerd/idempotency.test.ts", "test/workerd/exactly-once.model.test.ts"];

class WorkerdFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) =>
      PROJECT_ORDER.indexOf(file.project.name) * 2 +
      (ABORTS_EVERY_OBJECT.some((path) => file.moduleId.endsWith(path)) ? 1 : 0);
    // Stable: within a project, vitest's own order (slowest or largest first) is kept.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    sequence: { sequencer: WorkerdFirst },
    // Browser tests drive Chromium from Node against `wrangler dev`: vitest.browser.config.ts.
    // Two files at a time on this project's 2-core machines: two runtimes per workerd project, each
    // serving its share of the files one after another.
    maxWorkers: 2,
    projects: [
      {
        // Pure modules: no Worker, no bindings, so plain Node runs them.
        // The seeded property tests run a fixed number of cases; on a busy 2-core machine some take
        // more than vitest's default 5 s, which is a ceiling, not a goal.
        // One process serves file after file: a fresh one per file spent more on starting and
        // importing than the files spent on their tests (59 s against 22 s for the project). A test
        // that replaces a global or mocks restores it itself.
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
          isolate: false,
          testTimeout: TEST_TIMEOUT_MS,
        },
      },
      {
        plugins: [workerdPool()],
        test: {
          name: "workerd",
          include: ["test/workerd/**/*.test.ts"],
          exclude: [...SHORT_TIMEOUT_TESTS],
          ...WORKERD_TIMEOUTS,
          ...WORKERD_SHARED,
        },
      },
      {
        plugins: [workerdPool(), shortTimeoutCatalog()],
        test: {
          name: "workerd-short-timeouts",
          include: [...SHORT_TIMEOUT_TESTS],
          ...WORKERD_TIMEOUTS,
          ...WORKERD_SHARED,
        },
      },
    ],
  },
});
