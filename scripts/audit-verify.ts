// What `npm run audit -- verify <export>` does, apart from the process it runs in (scripts/audit.ts),
// so test/unit/audit-cli.test.ts runs it as it is.
import { readFile } from "node:fs/promises";
import { createLocalJWKSet } from "jose/jwks/local";
import { verifyExport } from "../src/audit/verify";

export const AUDIT_USAGE = `usage: npm run audit -- verify <export.ndjson> --keys <audit-jwks.json | https://…/.well-known/audit-jwks.json> [--filtered]

  Verifies an export of a tenant's audit log (GET /v1/audit?format=ndjson) offline, with the
  published keys (GET /.well-known/audit-jwks.json, saved to a file; a URL is fetched once):
  every receipt as the log wrote it, its hash, its signature, and its link to the one before.
  --filtered  the export was filtered (tool, run, operator, time): a jump in seq is not a gap.
  Exits 0 when the chain holds, 1 naming the first broken link, 2 on a usage error.`;

export interface AuditIo {
  out(line: string): void;
  err(line: string): void;
  /** Reads a file, or fetches a URL, as text. */
  read(source: string): Promise<string>;
}

export const processIo: AuditIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  async read(source) {
    if (/^https?:\/\//.test(source)) {
      const response = await fetch(source);
      if (!response.ok) throw new Error(`${source} answered ${response.status}`);
      return response.text();
    }
    return readFile(source, "utf8");
  },
};

interface VerifyArgs {
  file: string;
  keys: string;
  filtered: boolean;
}

function parseArgs(args: readonly string[]): VerifyArgs | { problem: string } {
  const [command, ...rest] = args;
  if (command !== "verify") return { problem: command ? `unknown command "${command}"` : "no command" };
  let file: string | null = null;
  let keys: string | null = null;
  let filtered = false;
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index] ?? "";
    if (arg === "--keys") {
      keys = rest[++index] ?? null;
      if (keys === null) return { problem: "--keys needs a file or a URL" };
    } else if (arg === "--filtered") filtered = true;
    else if (arg.startsWith("--")) return { problem: `unknown option ${arg}` };
    else if (file === null) file = arg;
    else return { problem: `one export at a time (got ${file} and ${arg})` };
  }
  if (file === null) return { problem: "name the export to verify" };
  if (keys === null) return { problem: "name the published keys with --keys" };
  return { file, keys, filtered };
}

/** Runs the command; its exit code. */
export async function auditCommand(args: readonly string[], io: AuditIo): Promise<number> {
  if (args[0] === "--help" || args[0] === "-h") {
    io.out(AUDIT_USAGE);
    return 0;
  }
  const parsed = parseArgs(args);
  if ("problem" in parsed) {
    io.err(`audit: ${parsed.problem}\n${AUDIT_USAGE}`);
    return 2;
  }
  let text: string;
  let jwks: Parameters<typeof createLocalJWKSet>[0];
  try {
    text = await io.read(parsed.file);
    jwks = JSON.parse(await io.read(parsed.keys)) as Parameters<typeof createLocalJWKSet>[0];
  } catch (error) {
    io.err(`audit: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  let keys: ReturnType<typeof createLocalJWKSet>;
  try {
    keys = createLocalJWKSet(jwks);
  } catch {
    io.err(`audit: ${parsed.keys} is not a JWK Set ({"keys": [...]})`);
    return 2;
  }
  const verdict = await verifyExport(text, keys, { allowGaps: parsed.filtered });
  if (!verdict.ok) {
    const where = verdict.seq === null ? "" : ` (receipt ${verdict.seq})`;
    io.err(`audit: ${parsed.file}: broken at line ${verdict.line}${where}: ${verdict.problem}`);
    return 1;
  }
  const range =
    verdict.first_seq === null ? "no receipts" : `receipts ${verdict.first_seq} to ${verdict.last_seq}`;
  io.out(
    `audit: ${parsed.file}: ${verdict.receipts} receipt${verdict.receipts === 1 ? "" : "s"} of ${verdict.tenant ?? "no tenant"} verified (${range}${parsed.filtered ? ", filtered" : ""}): every hash, signature and link holds`,
  );
  return 0;
}
