// What the compiled TENANTS (src/generated/tenants.ts) saves an isolate: the first parse of each
// environment's table in a fresh Node process, given the table compile wrote (`parseTenants` takes
// the stored value) or not (the schemas built, then the parse). Fresh processes, taking turns, so a
// slow stretch of the machine falls on both.
//   node bench/tenants-parse.mjs [runs]    prints the median, min and max of each, in ms
import { execFileSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";

const MODES = ["compiled", "schema"];
const ENVIRONMENTS = ["sandbox", "production"];

/** One first parse in this process: `mode` is "compiled" (parseTenants) or "schema" (no stored table). */
async function firstParseMs(mode, environment) {
  const { compiledTenants } = await tsImport("../src/generated/tenants.ts", import.meta.url);
  const { parseTenants, tenantsSchema } = await tsImport("../src/config/tenants.ts", import.meta.url);
  const table = JSON.parse(compiledTenants.find((entry) => entry.environment === environment).input);
  const start = performance.now();
  if (mode === "compiled") parseTenants(table);
  else tenantsSchema().parse(table);
  return performance.now() - start;
}

if (process.argv[2] === "--one") {
  process.stdout.write(String(await firstParseMs(process.argv[3], process.argv[4])));
} else {
  const runs = Number(process.argv[2] ?? 11);
  const times = {};
  for (let run = 0; run < runs; run++) {
    for (const environment of ENVIRONMENTS) {
      for (const mode of MODES) {
        const output = execFileSync(process.execPath, [
          fileURLToPath(import.meta.url),
          "--one",
          mode,
          environment,
        ]);
        const name = `${environment}, ${mode}`;
        times[name] = [...(times[name] ?? []), Number(output)];
      }
    }
  }
  for (const [name, values] of Object.entries(times)) {
    const sorted = values.sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    console.log(
      `${name}: median ${median.toFixed(2)} ms (min ${sorted[0].toFixed(2)}, max ${sorted.at(-1).toFixed(2)}, ${runs} processes)`,
    );
  }
}
