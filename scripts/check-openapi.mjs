// Checks the OpenAPI document the way its consumers use it, offline and without a server:
//   1. builds it under Node for origin https://proxy.example.com (scripts/dump-openapi.mjs) and
//      writes dist/openapi/openapi.json;
//   2. `redocly lint` with the recommended ruleset (redocly.yaml): errors fail, warnings are shown;
//   3. openapi-typescript generates dist/openapi/api.d.ts from it;
//   4. `tsc` type-checks test/openapi-client, a small client written against those types.
//   node scripts/check-openapi.mjs
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { dumpOpenApi } from "./dump-openapi.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/openapi");
const documentPath = join(out, "openapi.json");
const typesPath = join(out, "api.d.ts");
const require = createRequire(import.meta.url);

/** The installed CLI of a devDependency, run with this Node: no npx, no registry. */
function binOf(pkg, bin) {
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = require(manifestPath);
  const relativeBin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin[bin];
  return join(dirname(manifestPath), relativeBin);
}

const offline = {
  ...process.env,
  REDOCLY_TELEMETRY: "off",
  REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
};

/** Runs one step; its output is shown, its failure ends the check with the step's name. */
function step(name, pkg, bin, args, { filter = () => true } = {}) {
  const started = Date.now();
  const result = spawnSync(process.execPath, [binOf(pkg, bin), ...args], {
    cwd: root,
    env: offline,
    encoding: "utf8",
  });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`.split("\n").filter(filter).join("\n").trim();
  if (output) console.log(output);
  if (result.status !== 0) {
    console.error(`check-openapi: ${name} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
  console.log(`check-openapi: ${name} ok (${Date.now() - started} ms)`);
}

mkdirSync(out, { recursive: true });
const document = await dumpOpenApi("https://proxy.example.com");
writeFileSync(documentPath, `${JSON.stringify(document, null, 2)}\n`);
console.log(
  `check-openapi: built ${relative(root, documentPath)} (${Object.keys(document.paths).length} paths)`,
);

// Redocly CLI prints a Node 20 deprecation box on every run: it says nothing about the document.
const notBox = (line) => !/^\s*[╔║╚]/.test(line);
step(
  "redocly lint",
  "@redocly/cli",
  "redocly",
  ["lint", documentPath, "--config", join(root, "redocly.yaml"), "--format", "stylish"],
  { filter: notBox },
);
step("openapi-typescript", "openapi-typescript", "openapi-typescript", [documentPath, "-o", typesPath]);
step("tsc test/openapi-client", "typescript", "tsc", ["-p", join(root, "test/openapi-client")]);
