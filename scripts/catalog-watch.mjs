// The development loop of `npm start`: every change under catalog/ runs `npm run tools -- check`.
// A valid catalog is compiled into src/generated/catalog.ts, which `wrangler dev` reloads, so
// the change is served on the next request; an invalid one prints the check's problems and leaves
// the generated module as it was, so the proxy keeps serving the last good catalog. (A production
// build runs the same check and refuses a bad catalog: nothing is compiled.)
import { spawn } from "node:child_process";
import { join } from "node:path";
import { watchQuietly } from "./quiet-watch.mjs";

/**
 * Calls `onChange` once for each burst of changes to the folder's `.yaml` files: editors write a
 * file in several steps (a temporary file, a rename), so events within `quietMs` are one change.
 * Returns a function that stops watching.
 *
 * @example
 *   const stop = watchCatalog("catalog", () => console.log("catalog changed"));
 */
export function watchCatalog(dir, onChange, quietMs = 150) {
  return watchQuietly([dir], (file) => file.endsWith(".yaml"), onChange, quietMs);
}

/** Runs the catalog check (which compiles a valid catalog) one at a time, again if a change came meanwhile. */
export function catalogRecompiler(root, log = console) {
  let running = false;
  let again = false;
  const run = () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    const check = spawn(process.execPath, [join(root, "scripts", "tools.mjs"), "check"], {
      cwd: root,
      stdio: "inherit",
    });
    check.on("exit", (code) => {
      log.log(
        code === 0
          ? "catalog: compiled; served on the next request"
          : "catalog: not compiled; still serving the last good catalog",
      );
      running = false;
      if (again) {
        again = false;
        run();
      }
    });
  };
  return run;
}
