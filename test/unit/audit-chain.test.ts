import fc from "fast-check";
import { exportJWK, generateKeyPair } from "jose";
import { createLocalJWKSet } from "jose/jwks/local";
import { describe, expect, it } from "vitest";
import { type AuditSigner, nextReceipt } from "../../src/audit/chain";
import { verifyExport } from "../../src/audit/verify";
import { canonicalJson } from "../../src/core/canonical-json";
import type { AuditEvent, Receipt } from "../../src/wire/audit";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

async function keyPair(kid: string) {
  const { publicKey, privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519" });
  const jwk = await exportJWK(publicKey);
  return { signer: { kid, key: privateKey } satisfies AuditSigner, public: { ...jwk, kid, alg: "EdDSA" } };
}

function event(n: number): AuditEvent {
  return {
    id: `rcp_${n.toString(16).padStart(24, "0")}`,
    type: n % 2 === 0 ? "approval.approved" : "effect.outcome",
    at: new Date(1_800_000_000_000 + n * 1000).toISOString(),
    run_id: "run_audit",
    agent_profile: null,
    end_user: null,
    actor: { kind: "agent", id: null, name: null },
    tool: null,
    call: {
      call_id: `call_${n}`,
      idempotency_key: null,
      args: { amount_cents: n, note: "héllo" },
      args_digest: null,
    },
    approval: null,
    upstream: null,
    read_back: null,
  };
}

/** An export of `count` receipts, the signer changing at `rotateAt` (a key rotation). */
async function exportOf(count: number, rotateAt = count + 1) {
  const first = await keyPair("audit-1");
  const second = await keyPair("audit-2");
  const receipts: Receipt[] = [];
  for (let n = 1; n <= count; n++) {
    const head = receipts.at(-1) ?? null;
    const signer = n >= rotateAt ? second.signer : first.signer;
    receipts.push(await nextReceipt(head, "acme", event(n), 1_800_000_100_000 + n, signer));
  }
  const keys = createLocalJWKSet({ keys: [first.public, second.public] });
  return { lines: receipts.map((receipt) => canonicalJson(receipt)), keys, receipts };
}

const text = (lines: readonly string[]) => `${lines.join("\n")}\n`;

describe("an audit export verified offline", () => {
  it("verifies a whole chain signed before and after a key rotation", async () => {
    const { lines, keys } = await exportOf(6, 4);
    expect(await verifyExport(text(lines), keys)).toEqual({
      ok: true,
      receipts: 6,
      first_seq: 1,
      last_seq: 6,
      tenant: "acme",
    });
  });

  it("finds one byte changed anywhere in a receipt, at that receipt's line", async () => {
    const { lines, keys } = await exportOf(5);
    const target = 2;
    const line = lines[target] ?? "";
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: line.length - 1 }),
        fc.integer({ min: 32, max: 126 }),
        async (at, code) => {
          const changed = line.slice(0, at) + String.fromCharCode(code) + line.slice(at + 1);
          fc.pre(changed !== line);
          const tampered = [...lines];
          tampered[target] = changed;
          const verdict = await verifyExport(text(tampered), keys);
          expect(verdict).toMatchObject({ ok: false, line: target + 1 });
        },
      ),
      plan({ seed: 5_700_057, numRuns: 60 }),
    );
  });

  it("names a deleted receipt by its place, at the line after the gap", async () => {
    const { lines, keys } = await exportOf(6);
    const verdict = await verifyExport(text([...lines.slice(0, 3), ...lines.slice(4)]), keys);
    expect(verdict).toEqual({
      ok: false,
      line: 4,
      seq: 4,
      problem: "receipt 4 is missing: receipt 5 follows receipt 3",
    });
  });

  it("names two receipts swapped, at the first of them", async () => {
    const { lines, keys } = await exportOf(6);
    const swapped = [...lines];
    [swapped[2], swapped[3]] = [lines[3] ?? "", lines[2] ?? ""];
    const verdict = await verifyExport(text(swapped), keys);
    expect(verdict).toEqual({
      ok: false,
      line: 3,
      seq: 3,
      problem: "receipt 4 is out of order: receipt 3 must come before it, and is on line 4",
    });
  });

  it("refuses a receipt re-signed with a key that is not published, and one whose link was rewritten", async () => {
    const { lines, keys, receipts } = await exportOf(3);
    const stranger = await keyPair("audit-1");
    const forged = await nextReceipt(
      { seq: 1, hash: receipts[0]?.hash ?? "" },
      "acme",
      { ...event(2), call: null },
      1,
      stranger.signer,
    );
    const verdict = await verifyExport(text([lines[0] ?? "", canonicalJson(forged), lines[2] ?? ""]), keys);
    expect(verdict).toMatchObject({ ok: false, line: 2, seq: 2 });
    expect(verdict.ok ? "" : verdict.problem).toContain("signature");
  });

  it("lets a filtered export skip receipts only when told it is filtered, never reorder them", async () => {
    const { lines, keys } = await exportOf(6);
    const filtered = text([lines[0] ?? "", lines[2] ?? "", lines[5] ?? ""]);
    expect(await verifyExport(filtered, keys, { allowGaps: true })).toMatchObject({ ok: true, receipts: 3 });
    expect(await verifyExport(filtered, keys)).toMatchObject({ ok: false, line: 2, seq: 2 });
    const backwards = text([lines[0] ?? "", lines[5] ?? "", lines[2] ?? ""]);
    expect(await verifyExport(backwards, keys, { allowGaps: true })).toMatchObject({ ok: false, line: 3 });
  });

  it("verifies an empty export as empty, and refuses a line that is not JSON", async () => {
    const { keys } = await exportOf(1);
    expect(await verifyExport("", keys)).toMatchObject({ ok: true, receipts: 0, first_seq: null });
    expect(await verifyExport("{not json\n", keys)).toMatchObject({
      ok: false,
      line: 1,
      problem: "the line is not JSON",
    });
  });
});
