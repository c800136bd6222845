// `npm run tools -- <command>`: the catalog as data (catalog/*.yaml).
//
//   check            every problem of every catalog file, as `catalog/<file>: <path>: <problem>`;
//                    exits 1 if any, else compiles
//   check --env production
//                    also refuses what a production deploy must not ship: upstream URLs on
//                    example.com/.net/.org, .invalid, .test, .example, localhost or 127.0.0.1, or on a
//                    host no public upstream has (scripts/tools/upstream-hosts.ts) in
//                    [env.production.vars] and the catalog's production base URLs, a KV namespace id
//                    that is a placeholder, a malformed METRICS_ACCOUNT_ID (scripts/tools/production-check.ts);
//                    exits 1 if any. The repository ships such placeholders, so `npm test` runs the plain check
//                    (`--env sandbox` adds nothing: the sandbox may use loopback and service bindings)
//   check --remote [--namespace <ns>] [--url <url>] [--header "Name: value"]...
//                    also lists each mcp upstream's live tools: every declared remote tool is
//                    unchanged, changed (with the differences) or vanished; exits 1 unless all unchanged
//   compile          writes src/generated/catalog.ts (what the Worker imports: declarations as
//                    data, schemas as zod code, so no YAML is parsed, no JSON Schema converted and
//                    nothing fetched when it starts), catalog/schema.json and
//                    src/generated/tenants.ts (each environment's TENANTS as parsed, so an
//                    isolate given that table builds no schema of it)
//                    (src/generated/ holds these modules and nothing written by hand)
//   compile --check  fails when any of them is not what compile would write (`npm run lint`)
//   import openapi <file> --namespace <ns> [--operations a,b]
//                    drafts catalog/<ns>.yaml from an OpenAPI document (scripts/tools/import-openapi.mjs)
//   import mcp <url> --namespace <ns> [--header "Name: value"]... [--tools a,b]
//                    drafts catalog/<ns>.yaml and its pins file from a remote MCP server's tools
//                    (scripts/tools/import-mcp.ts)
//   pin <ns> [tool] [--url <url>] [--header "Name: value"]...
//                    records a remote tool's changed definition as reviewed: the pins file and the
//                    declaration's pin (scripts/tools/mcp-pin.ts)
//   certify <ns> [--env sandbox|production] [--url <base url>] [--header "Name: value"]...
//           [--tenant <id>] [--catalog <dir>]
//                    measures whether each upstream of the namespace applies an idempotency key once
//                    and refuses requests without a valid credential (scripts/tools/certify.ts): each
//                    write tool with `certify.args` sent twice under one key, its postcondition read,
//                    the key with another body, and requests without, with a forged and with another
//                    request's credential. Sandbox only for writes (by default the sandbox Worker
//                    started here in Miniflare when wrangler.toml binds the upstream to it); with
//                    --env production only the credential probes, on reads. Writes
//                    <catalog>/<ns>.certification.json (production: <ns>.certification.production.json)
//                    when every probe ran or was skipped for a stated reason; exits 1 when one failed
//                    (the record is still written) or could not run (nothing written)
//   enable <ns> --tenant <id> [--env sandbox|production]
//                    gives a tenant the namespace in wrangler.toml and lists its upstreams' secrets
//                    in secrets.production.example.json (scripts/tools/enable.mjs), then compiles
//                    (the TENANTS it changed)
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tsImport } from "tsx/esm/api";
import { root } from "./local-stack.mjs";

const [command, ...rest] = process.argv.slice(2);
const OUTPUTS = {
  compiled: join(root, "src", "generated", "catalog.ts"),
  schema: join(root, "catalog", "schema.json"),
  tenants: join(root, "src", "generated", "tenants.ts"),
};

// The rules are the Worker's own TypeScript modules, loaded through tsx rather than copied.
const load = () => tsImport("./tools/catalog-check.ts", import.meta.url);

async function check() {
  const { checkCatalog } = await load();
  const { problems, compiled, outputs, standings } = checkCatalog(root);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`\n${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing compiled.`);
    return { ok: false };
  }
  return {
    ok: true,
    files: outputs,
    count: compiled.length,
    standings,
  };
}

/** `--env <name>` of a check: "production", "sandbox" or undefined; anything else is refused. */
function envOption(args) {
  const at = args.indexOf("--env");
  if (at === -1) return undefined;
  const name = args[at + 1];
  if (name !== "production" && name !== "sandbox") {
    console.error(
      `--env: "${name ?? ""}" is not an environment of wrangler.toml; use --env production or --env sandbox`,
    );
    process.exit(2);
  }
  return name;
}

const read = (path) => (existsSync(path) ? readFileSync(path, "utf8") : null);

/** Writes what a passed check compiled (only the files that change), and says so. */
function writeOutputs(result) {
  for (const [name, text] of Object.entries(result.files)) {
    if (read(OUTPUTS[name]) !== text) writeFileSync(OUTPUTS[name], text);
  }
  console.log(
    `catalog: ${result.count} declared namespace${result.count === 1 ? "" : "s"} checked and compiled`,
  );
  // What the proxy relies on for exactly-once, per upstream (docs/guarantees.md, the two legs).
  for (const { namespace, upstream, standing } of result.standings) {
    console.log(`  ${namespace}.${upstream}: ${standing}`);
  }
}

switch (command) {
  case "check":
  case "compile": {
    const environment = envOption(rest);
    const args = rest.filter((arg, index) => arg !== "--env" && rest[index - 1] !== "--env");
    const result = await check();
    if (args.includes("--remote")) {
      const { checkRemote } = await tsImport("./tools/mcp-pin.ts", import.meta.url);
      if (
        !(await checkRemote(
          join(root, "catalog"),
          args.filter((arg) => arg !== "--remote"),
        ))
      )
        process.exit(1);
    }
    if (environment === "production") {
      const { runProductionCheck, unverifiedJwtWarnings } = await tsImport(
        "./tools/production-check.ts",
        import.meta.url,
      );
      // Warnings, not refusals, printed before the refusals end the command.
      for (const warning of unverifiedJwtWarnings(result.standings ?? [])) console.warn(warning);
      if (!runProductionCheck(root)) process.exit(1);
    }
    if (!result.ok) process.exit(1);
    if (args.includes("--check")) {
      const stale = Object.entries(result.files).filter(([name, text]) => read(OUTPUTS[name]) !== text);
      for (const [name] of stale) {
        console.error(`${OUTPUTS[name]} is stale: run \`npm run tools -- compile\` and commit it`);
      }
      process.exit(stale.length > 0 ? 1 : 0);
    }
    writeOutputs(result);
    break;
  }
  case "import": {
    if (rest[0] === "mcp") {
      const { runImportMcp } = await tsImport("./tools/import-mcp.ts", import.meta.url);
      process.exitCode = await runImportMcp(rest);
      break;
    }
    // Through tsx: the importer shares the host rules (src/core/host-class.ts) with the Worker.
    const { runImportOpenApi } = await tsImport("./tools/import-openapi.mjs", import.meta.url);
    process.exitCode = await runImportOpenApi(rest);
    break;
  }
  case "pin": {
    const { runPin } = await tsImport("./tools/mcp-pin.ts", import.meta.url);
    process.exitCode = await runPin(join(root, "catalog"), rest);
    break;
  }
  case "certify": {
    const { runCertify } = await tsImport("./tools/certify.ts", import.meta.url);
    process.exitCode = await runCertify(root, rest);
    break;
  }
  case "enable": {
    const { runEnable } = await import("./tools/enable.mjs");
    process.exitCode = runEnable(root, rest);
    // wrangler.toml's TENANTS changed: compile it again, so the Worker takes it as compiled. The
    // enable itself is done either way; a catalog with problems is compiled once they are fixed.
    if (process.exitCode === 0) {
      const result = await check();
      if (result.ok) writeOutputs(result);
      else
        console.error(
          "wrangler.toml is changed; run `npm run tools -- compile` once the problems above are fixed",
        );
    }
    break;
  }
  default:
    console.error(
      "usage: npm run tools -- check [--env production] [--remote] | compile [--check] | import openapi <file> --namespace <ns> | import mcp <url> --namespace <ns> | pin <ns> [tool] | certify <ns> [--env production] [--url <url>] | enable <ns> --tenant <id>",
    );
    process.exit(2);
}
