import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { certificationsOf, standingsOf } from "../../scripts/tools/catalog-certifications";
import { checkCatalog } from "../../scripts/tools/catalog-check";
import { CatalogFileSchema } from "../../src/catalog/declaration";

const root = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The shipped support namespace and its record, copied where a test may change either. */
function copy(change: { record?: (text: string) => string; yaml?: (text: string) => string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "certifications-"));
  dirs.push(dir);
  const yaml = readFileSync(join(root, "catalog", "support.yaml"), "utf8");
  const record = readFileSync(join(root, "catalog", "support.certification.json"), "utf8");
  writeFileSync(join(dir, "support.yaml"), change.yaml ? change.yaml(yaml) : yaml);
  writeFileSync(join(dir, "support.certification.json"), change.record ? change.record(record) : record);
  const raw: unknown = parse(readFileSync(join(dir, "support.yaml"), "utf8"), { merge: true });
  return { dir, raw, file: CatalogFileSchema.parse(raw) };
}

describe("a namespace's certification record, as check reads it", () => {
  it("certifies the shipped upstreams whose key probes ran, and leaves the others declared", () => {
    const { dir, raw, file } = copy();
    const problems: string[] = [];
    const certifications = certificationsOf(root, dir, file, raw, problems);
    expect(problems).toEqual([]);
    expect(certifications.PAYMENTS_API?.status).toBe("certified");
    expect(certifications.EMAIL_API?.status).toBe("none");
    const standings = standingsOf(file, certifications);
    expect(standings.find((one) => one.upstream === "PAYMENTS_API")).toMatchObject({
      standing: expect.stringMatching(/^certified \d{4}-\d\d-\d\d$/),
      unverified_jwt: false,
    });
    expect(standings.find((one) => one.upstream === "EMAIL_API")?.standing).toBe("declared: honours keys");
  });

  it("calls a record stale once the declarations it measured change", () => {
    const { dir, raw, file } = copy({
      yaml: (text) =>
        text.replace("amount_cents: 100, reason: out_of_stock", "amount_cents: 101, reason: out_of_stock"),
    });
    const certifications = certificationsOf(root, dir, file, raw, []);
    expect(certifications.PAYMENTS_API?.status).toBe("stale");
    const standing = standingsOf(file, certifications).find((one) => one.upstream === "PAYMENTS_API");
    expect(standing?.standing).toBe("declared: honours keys (its certification is stale: certify it again)");
  });

  it("refuses a malformed record with its location, and a record of another namespace", () => {
    const broken = copy({ record: (text) => text.replace('"verdict": "pass"', '"verdict": "maybe"') });
    const problems: string[] = [];
    expect(certificationsOf(root, broken.dir, broken.file, broken.raw, problems)).toEqual({});
    expect(problems[0]).toMatch(/support\.certification\.json: upstreams\.\w+\.verdict: /);
    const other = copy({
      record: (text) => text.replace('"namespace": "support"', '"namespace": "shipping"'),
    });
    const refused: string[] = [];
    certificationsOf(root, other.dir, other.file, other.raw, refused);
    expect(refused[0]).toMatch(/namespace: a record of shipping in sandbox, not of support in sandbox/);
  });

  it("treats an upstream whose certification saw a second effect as not honouring keys", () => {
    const { dir } = copy({
      record: (text) => {
        const record = JSON.parse(text);
        for (const probe of record.upstreams.PAYMENTS_API.probes) {
          if (probe.probe === "key_reuse_same_body") probe.result = "fail";
        }
        record.upstreams.PAYMENTS_API.verdict = "fail";
        return JSON.stringify(record);
      },
    });
    const checked = checkCatalog(root, dir);
    expect(checked.problems).toEqual([]);
    expect(checked.standings.find((one) => one.upstream === "PAYMENTS_API")?.standing).toMatch(
      /^refuted \d{4}-\d\d-\d\d: a second effect under one key; treated as not honouring keys$/,
    );
    expect(checked.outputs?.compiled).toContain('"status": "refuted"');
  });
});
