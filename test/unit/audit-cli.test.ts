import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { type AuditIo, auditCommand } from "../../scripts/audit-verify";
import { nextReceipt } from "../../src/audit/chain";
import { canonicalJson } from "../../src/core/canonical-json";
import type { AuditEvent, Receipt } from "../../src/wire/audit";

/** `npm run audit -- verify <export> --keys <jwks>`: an export's verdict, and the first broken link named. */

function event(n: number): AuditEvent {
  return {
    id: `rcp_${n.toString(16).padStart(24, "0")}`,
    type: "effect.outcome",
    at: new Date(1_800_000_000_000 + n).toISOString(),
    run_id: "run_cli",
    agent_profile: "support",
    end_user: null,
    actor: { kind: "agent", id: null, name: null },
    tool: null,
    call: null,
    approval: null,
    upstream: null,
    read_back: null,
  };
}

async function exportAndKeys(count: number) {
  const { publicKey, privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  const jwks = JSON.stringify({
    keys: [{ ...(await exportJWK(publicKey)), kid: "audit-cli", alg: "EdDSA" }],
  });
  const receipts: Receipt[] = [];
  for (let n = 1; n <= count; n++) {
    receipts.push(
      await nextReceipt(receipts.at(-1) ?? null, "acme", event(n), n, { kid: "audit-cli", key: privateKey }),
    );
  }
  return { lines: receipts.map((receipt) => canonicalJson(receipt)), jwks };
}

function io(files: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  const fake: AuditIo = {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    read: async (source) => {
      const text = files[source];
      if (text === undefined) throw new Error(`ENOENT: no such file ${source}`);
      return text;
    },
  };
  return { fake, out, err };
}

const verify = (file: string) => ["verify", file, "--keys", "keys.json"];

describe("npm run audit -- verify", () => {
  it("says an intact export holds, and names the first broken link of a tampered one by line and receipt", async () => {
    const { lines, jwks } = await exportAndKeys(5);
    const changed = [...lines];
    changed[2] = (changed[2] ?? "").replace('"run_cli"', '"run_clj"');
    const files = {
      "keys.json": jwks,
      "good.ndjson": `${lines.join("\n")}\n`,
      "changed.ndjson": `${changed.join("\n")}\n`,
      "deleted.ndjson": `${[...lines.slice(0, 3), ...lines.slice(4)].join("\n")}\n`,
      "swapped.ndjson": `${[lines[0], lines[2], lines[1], lines[3], lines[4]].join("\n")}\n`,
    };
    const run = async (file: string) => {
      const { fake, out, err } = io(files);
      return { code: await auditCommand(verify(file), fake), out, err };
    };
    expect(await run("good.ndjson")).toMatchObject({
      code: 0,
      out: [expect.stringContaining("5 receipts of acme verified (receipts 1 to 5)")],
    });
    expect(await run("changed.ndjson")).toMatchObject({
      code: 1,
      err: [
        "audit: changed.ndjson: broken at line 3 (receipt 3): receipt 3 was changed: its hash is not the hash of its content",
      ],
    });
    expect(await run("deleted.ndjson")).toMatchObject({
      code: 1,
      err: [
        "audit: deleted.ndjson: broken at line 4 (receipt 4): receipt 4 is missing: receipt 5 follows receipt 3",
      ],
    });
    expect(await run("swapped.ndjson")).toMatchObject({
      code: 1,
      err: [
        "audit: swapped.ndjson: broken at line 2 (receipt 2): receipt 3 is out of order: receipt 2 must come before it, and is on line 3",
      ],
    });
  });

  it("refuses a call it cannot carry out, saying why", async () => {
    const { fake, err } = io({ "keys.json": "not json", "e.ndjson": "" });
    expect(await auditCommand([], fake)).toBe(2);
    expect(await auditCommand(["check", "e.ndjson"], fake)).toBe(2);
    expect(await auditCommand(["verify", "e.ndjson"], fake)).toBe(2);
    expect(await auditCommand(["verify", "missing.ndjson", "--keys", "keys.json"], fake)).toBe(2);
    expect(await auditCommand(["verify", "e.ndjson", "--keys", "keys.json"], fake)).toBe(2);
    expect(err.map((line) => line.split("\n")[0])).toEqual([
      "audit: no command",
      'audit: unknown command "check"',
      "audit: name the published keys with --keys",
      "audit: ENOENT: no such file missing.ndjson",
      expect.stringContaining("audit: Unexpected token"),
    ]);
  });

  it("runs as npm's script, from files", async () => {
    const { lines, jwks } = await exportAndKeys(2);
    const folder = await mkdtemp(join(tmpdir(), "audit-cli-"));
    await writeFile(join(folder, "keys.json"), jwks);
    await writeFile(join(folder, "export.ndjson"), `${lines[1]}\n`);
    const run = promisify(execFile);
    const ok = await run("npx", [
      "tsx",
      "scripts/audit.ts",
      "verify",
      join(folder, "export.ndjson"),
      "--keys",
      join(folder, "keys.json"),
    ]);
    expect(ok.stdout).toContain("1 receipt of acme verified (receipts 2 to 2)");
  });
});
