// Builds the proxy's OpenAPI document under Node, with no server: imports src/routes/docs.ts
// through tsx, with `cloudflare:workers` mapped to a stub (scripts/openapi/tsconfig.dump.json).
//   node scripts/dump-openapi.mjs [origin] > openapi.json
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The document as GET /openapi.json answers it to a caller that reached the proxy at `origin`. */
export async function dumpOpenApi(origin = "https://proxy.example.com") {
  const { openApiDocument } = await tsImport("../src/routes/docs.ts", {
    parentURL: import.meta.url,
    tsconfig: join(root, "scripts/openapi/tsconfig.dump.json"),
  });
  return openApiDocument(origin);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await dumpOpenApi(process.argv[2]), null, 2)}\n`);
}
