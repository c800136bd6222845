import fs from "node:fs";

/**
 * A fix to the test harness, until a release of @cloudflare/vitest-pool-workers carries it
 * (cloudflare/workers-sdk#15092, fixed upstream by #15106; 0.19.1 to 0.23.0 lack it).
 *
 * The harness serves each Worker entrypoint and Durable Object class through a wrapper class whose
 * constructor wraps the class's prototype in one more Proxy every time it constructs an instance. A
 * request through `exports.default` constructs one, as does every new Durable Object, so each
 * property read walks one more trap per object constructed before it: a runtime that serves many
 * test files one after another (`isolate: false` in vitest.config.ts) grows slower with every file,
 * a health check from 6 ms to 300 ms within twelve files, and its stack overflows after a few
 * thousand objects. The fix installs the Proxy once per class, at the first construction as before.
 *
 * The harness's worker modules are read from disk by its Node half (the module fallback service),
 * so the fix rewrites that one file's text as it is read. A harness without the faulty lines is
 * served as it is.
 */
const HARNESS_MODULE =
  /[\\/]@cloudflare[\\/]vitest-pool-workers[\\/]dist[\\/]worker[\\/]lib[\\/]cloudflare[\\/]test-internal\.mjs$/;

const REWRITES: ReadonlyArray<readonly [string, string]> = [
  [
    "\tfunction Class(...args) {\n\t\tClass.prototype = new Proxy(Class.prototype, {",
    "\tlet wrapped = false;\n\tfunction Class(...args) {\n\t\tif (!wrapped) { wrapped = true; Class.prototype = new Proxy(Class.prototype, {",
  ],
  [
    "\t\t} });\n\t\treturn Reflect.construct(superClass, args, Class);",
    "\t\t} }); }\n\t\treturn Reflect.construct(superClass, args, Class);",
  ],
];

/** Fixes the harness's module in what `fs.readFileSync` answers for it; other files pass through. */
export function wrapHarnessPrototypesOnce(): void {
  const read = fs.readFileSync;
  const patched = (...args: Parameters<typeof read>) => {
    const contents = read(...args);
    const [path] = args;
    if (typeof contents !== "string" || typeof path !== "string" || !HARNESS_MODULE.test(path))
      return contents;
    if (!REWRITES.every(([from]) => contents.includes(from))) return contents;
    return REWRITES.reduce((text, [from, to]) => text.replace(from, to), contents);
  };
  // The harness calls `fs.readFileSync` on node:fs's default export at each read, so replacing
  // the property reaches it; `readFileSync`'s overloads are all served by the one function.
  fs.readFileSync = patched as typeof read;
}
