import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/free-port.mjs";
import { runCertify } from "../../scripts/tools/certify";
import {
  type CertificationRecord,
  CertificationRecordSchema,
  certificationOf,
} from "../../src/catalog/certification";
import { startKeyIgnoringUpstream } from "../fixtures/key-ignoring-upstream.mjs";

/**
 * `npm run tools -- certify` end to end: against the sandbox Worker it starts itself (Miniflare,
 * dist/sandbox/index.js), the shipped support and shipping namespaces, given `certify.args` in a
 * copy of the catalog, pass; a refunds API that ignores keys and credentials is refuted, probe by
 * probe; production gets reads only; an upstream out of reach leaves no record.
 */

const root = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURE = fileURLToPath(new URL("../fixtures/key-ignoring/refunds.yaml", import.meta.url));
const SANDBOX_WAIT_MS = 120_000;

/** The shipped catalog files with `certify.args` added to the named tools. */

let dir: string;
const output: string[] = [];
const certify = (args: string[]) =>
  runCertify(
    root,
    ["--catalog", dir, ...args],
    (line) => output.push(line),
    (line) => output.push(line),
  );
const printed = () => output.join("\n");

function recordIn(name: string): CertificationRecord {
  return CertificationRecordSchema.parse(JSON.parse(readFileSync(join(dir, name), "utf8")));
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "certify-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  output.length = 0;
  for (const name of readdirSync(dir)) rmSync(join(dir, name));
});

describe("certify against the sandbox", () => {
  beforeAll(() => {
    if (!existsSync(join(root, "dist", "sandbox", "index.js"))) {
      throw new Error("dist/sandbox/index.js is missing: run `npm run build:sandbox`");
    }
  });

  /** The shipped namespace as it is: its tools declare the arguments a certification sends. */
  function copyShipped(name: string) {
    writeFileSync(join(dir, name), readFileSync(join(root, "catalog", name), "utf8"));
  }

  it(
    "passes the shipped support namespace, skipping only the probes of a tool that declares no certify.args",
    async () => {
      copyShipped("support.yaml");
      expect(await certify(["support"]), printed()).toBe(0);
      const record = recordIn("support.certification.json");
      expect(record).toMatchObject({ format: 1, namespace: "support", environment: "sandbox" });
      for (const name of ["PAYMENTS_API", "CRM_API"]) {
        const upstream = record.upstreams[name];
        expect(upstream?.verdict).toBe("pass");
        expect(upstream?.probes.map((probe) => [probe.probe, probe.result])).toEqual([
          ["key_reuse_same_body", "pass"],
          ["postcondition_read", "pass"],
          ["key_reuse_other_body", "pass"],
          ["no_credential", "pass"],
          ["forged_credential", "pass"],
          ["credential_for_other_request", "pass"],
        ]);
        expect(certificationOf(record, name, upstream?.digest ?? "")).toMatchObject({
          status: "certified",
          key_reuse: "pass",
          credential: "pass",
        });
      }
      // send_customer_email declares no certify.args (it sends a draft that must exist first): its
      // key probes are skipped, saying so; the email API's credential is probed on the draft tool.
      const email = record.upstreams.EMAIL_API?.probes ?? [];
      expect(email.map((probe) => [probe.tool, probe.probe, probe.result])).toEqual([
        ["send_customer_email", "key_reuse_same_body", "skipped"],
        ["send_customer_email", "postcondition_read", "skipped"],
        ["send_customer_email", "key_reuse_other_body", "skipped"],
        ["draft_customer_email", "no_credential", "pass"],
        ["draft_customer_email", "forged_credential", "pass"],
        ["draft_customer_email", "credential_for_other_request", "pass"],
      ]);
      // A read-only upstream gets the credential probes on its read.
      expect(record.upstreams.ORDERS_API?.probes.map((probe) => probe.result)).toEqual([
        "pass",
        "pass",
        "pass",
      ]);
      expect(printed()).toMatch(
        /issue_refund key_reuse_same_body: a second send under the same key answered the first effect \(refund_id re_\w+\)/,
      );
      expect(printed()).toMatch(/left in the local sandbox, disposed with it: .*refund_id re_/);
    },
    SANDBOX_WAIT_MS,
  );

  it(
    "passes shipping's reroute, its effect named by the whole answer (its postcondition names no result value)",
    async () => {
      copyShipped("shipping.yaml");
      expect(await certify(["shipping"]), printed()).toBe(0);
      const upstream = recordIn("shipping.certification.json").upstreams.SHIPMENTS_API;
      expect(upstream?.verdict).toBe("pass");
      expect(upstream?.probes.filter((probe) => probe.result === "pass")).toHaveLength(6);
    },
    SANDBOX_WAIT_MS,
  );
});

describe("certify against an upstream that ignores keys", () => {
  let upstream: Awaited<ReturnType<typeof startKeyIgnoringUpstream>>;
  beforeAll(async () => {
    upstream = await startKeyIgnoringUpstream();
  });
  afterAll(() => upstream.close());

  it("refutes it: a second effect under one key, and requests served without a valid credential", async () => {
    copyFileSync(FIXTURE, join(dir, "refunds.yaml"));
    expect(await certify(["refunds", "--url", upstream.url, "--tenant", "acme"])).toBe(1);
    const report = printed();
    expect(report).toMatch(
      /fail\s+issue_refund key_reuse_same_body: the upstream made a second effect: re_\w+, re_\w+\./,
    );
    expect(report).toMatch(
      /fail\s+issue_refund key_reuse_other_body: the upstream applied another body under a used key/,
    );
    for (const probe of ["no_credential", "forged_credential", "credential_for_other_request"]) {
      expect(report).toContain(
        `issue_refund ${probe}: the upstream accepted a request without a valid credential`,
      );
    }
    // The refund it made first is there: reading back is not what this upstream gets wrong.
    expect(report).toMatch(/pass\s+issue_refund postcondition_read: list_refunds finds the effect/);
    // A refuted certification is a finding: the record is written.
    const record = recordIn("refunds.certification.json");
    const entry = record.upstreams.REFUNDS_API;
    expect(entry?.verdict).toBe("fail");
    expect(certificationOf(record, "REFUNDS_API", entry?.digest ?? "")).toMatchObject({
      status: "refuted",
      key_reuse: "fail",
      credential: "fail",
    });
    expect(report).toMatch(
      /left in the sandbox \(it offers no route to delete them\): issue_refund refund_id re_/,
    );
  });

  it("in production sends reads only, and skips the writes saying why", async () => {
    copyFileSync(FIXTURE, join(dir, "refunds.yaml"));
    const before = upstream.requests.length;
    const keys = process.env.UPSTREAM_SIGNING_KEYS;
    delete process.env.UPSTREAM_SIGNING_KEYS;
    try {
      expect(
        await certify(["refunds", "--env", "production", "--url", upstream.url, "--tenant", "acme"]),
      ).toBe(1);
    } finally {
      if (keys !== undefined) process.env.UPSTREAM_SIGNING_KEYS = keys;
    }
    const sent = upstream.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((request) => request.method === "GET")).toBe(true);
    expect(existsSync(join(dir, "refunds.certification.json"))).toBe(false);
    const entry = recordIn("refunds.certification.production.json").upstreams.REFUNDS_API;
    expect(entry?.probes.map((probe) => [probe.tool, probe.probe, probe.result])).toEqual([
      ["issue_refund", "key_reuse_same_body", "skipped"],
      ["issue_refund", "postcondition_read", "skipped"],
      ["issue_refund", "key_reuse_other_body", "skipped"],
      ["list_refunds", "no_credential", "fail"],
      ["list_refunds", "forged_credential", "fail"],
      ["list_refunds", "credential_for_other_request", "skipped"],
    ]);
  });
});

describe("certify with an upstream out of reach", () => {
  it("exits 1 naming the probe that could not run, and writes nothing", async () => {
    copyFileSync(FIXTURE, join(dir, "refunds.yaml"));
    const port = await freePort();
    expect(await certify(["refunds", "--url", `http://127.0.0.1:${port}`, "--tenant", "acme"])).toBe(1);
    expect(printed()).toMatch(
      /certify: REFUNDS_API issue_refund key_reuse_same_body: POST http:\/\/127\.0\.0\.1:\d+\/refunds is out of reach .*; nothing written/,
    );
    expect(readdirSync(dir)).toEqual(["refunds.yaml"]);
  });

  it("refuses a usage it cannot read, with exit 2", async () => {
    expect(await certify([])).toBe(2);
    expect(await certify(["support", "--env", "staging"])).toBe(2);
    expect(printed()).toContain("usage: npm run tools -- certify <ns>");
  });
});
