// Sizes of a built Worker's modules (scripts/build-worker.mjs writes them; a dry run copies them to
// its --outdir): what the isolate evaluates when it starts, the main module and every module it
// imports statically, transitively; and everything uploaded, which adds the chunks loaded by
// dynamic import() on first use. Gzipped sizes are summed module by module, as each is stored and
// parsed on its own.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

/**
 * The relative modules a built module imports statically: `import ... from "./x.mjs"`,
 * `import "./x.mjs"` and `export ... from "./x.mjs"`, never `import("./x.mjs")`. esbuild's output
 * writes them at the module's top, as here.
 */
export function staticImports(code) {
  const found = new Set();
  for (const match of code.matchAll(/\b(?:import|export)\s*(?:[^"'();]*?\bfrom\s*)?["']\.\/([^"']+)["']/g)) {
    found.add(match[1]);
  }
  return found;
}

/** Modules, raw and gzipped bytes of `names` in `dir`. */
function measure(dir, names) {
  let raw = 0;
  let gzip = 0;
  for (const name of names) {
    const bytes = readFileSync(join(dir, name));
    raw += bytes.length;
    gzip += gzipSync(bytes).length;
  }
  return { modules: names.length, raw, gzip };
}

/** `startup`: `main` and its static imports; `total`: every .mjs/.js module in `dir`. */
export function moduleSizes(dir, main) {
  const startup = new Set();
  const pending = [main];
  while (pending.length > 0) {
    const name = pending.pop();
    if (startup.has(name)) continue;
    startup.add(name);
    pending.push(...staticImports(readFileSync(join(dir, name), "utf8")));
  }
  const all = readdirSync(dir).filter((name) => /\.m?js$/.test(name));
  return { startup: measure(dir, [...startup]), total: measure(dir, all) };
}
