// `npm run tools -- <command>`: the catalog as data (catalog/*.yaml).
//
//   check            every problem of every catalog file, as `catalog/<file>: <path>: <problem>`;
//                    exits 1 if any, else compiles
//   compile          writes src/tools/catalog.generated.ts (what the Worker imports: declarations as
//                    data, schemas as zod code, so no YAML is parsed, no JSON Schema converted and
//                    nothing fetched when it starts) and catalog/schema.json
//   compile --check  fails when either file is not what compile would write (`npm run lint`)
//   import openapi <file> --namespace <ns> [--operations a,b]
//                    drafts catalog/<ns>.yaml from an OpenAPI document (scripts/tools/import-openapi.mjs)
//   enable <ns> --tenant <id> [--env sandbox|production]
//                    gives a tenant the namespace in wrangler.toml and lists its upstreams' secrets
//                    in secrets.production.example.json (scripts/tools/enable.mjs)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tsImport } from "tsx/esm/api";
import { root } from "./local-stack.mjs";

const [command, ...rest] = process.argv.slice(2);
const OUTPUTS = {
  compiled: join(root, "src", "tools", "catalog.generated.ts"),
  schema: join(root, "catalog", "schema.json"),
};

// The rules are the Worker's own TypeScript modules, loaded through tsx rather than copied.
const load = () => tsImport("./tools/catalog-check.ts", import.meta.url);

async function check() {
  const { checkCatalog } = await load();
  const { problems, compiled, outputs } = checkCatalog(root);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`\n${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing compiled.`);
    return { ok: false };
  }
  return {
    ok: true,
    files: outputs,
    count: compiled.length,
  };
}

const read = (path) => (existsSync(path) ? readFileSync(path, "utf8") : null);

switch (command) {
  case "check":
  case "compile": {
    const result = await check();
    if (!result.ok) process.exit(1);
    if (rest.includes("--check")) {
      const stale = Object.entries(result.files).filter(([name, text]) => read(OUTPUTS[name]) !== text);
      for (const [name] of stale) {
        console.error(`${OUTPUTS[name]} is stale: run \`npm run tools -- compile\` and commit it`);
      }
      process.exit(stale.length > 0 ? 1 : 0);
    }
    for (const [name, text] of Object.entries(result.files)) {
      if (read(OUTPUTS[name]) !== text) writeFileSync(OUTPUTS[name], text);
    }
    console.log(
      `catalog: ${result.count} declared namespace${result.count === 1 ? "" : "s"} checked and compiled`,
    );
    break;
  }
  case "import": {
    const { runImportOpenApi } = await import("./tools/import-openapi.mjs");
    process.exitCode = await runImportOpenApi(rest);
    break;
  }
  case "enable": {
    const { runEnable } = await import("./tools/enable.mjs");
    process.exitCode = runEnable(root, rest);
    break;
  }
  default:
    console.error(
      "usage: npm run tools -- check | compile [--check] | import openapi <file> --namespace <ns> | enable <ns> --tenant <id>",
    );
    process.exit(2);
}
