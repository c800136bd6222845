import { env } from "cloudflare:workers";
import { createLocalJWKSet } from "jose/jwks/local";
import { describe, expect, it } from "vitest";
import { verifyExport } from "../../src/audit/verify";
import { parseUpstreamSigningKeys, publicJwks } from "../../src/config/signing-keys";
import { signedInOperator } from "./console-client";
import { askAcmeRefund, callTool, decide, openRun, refund } from "./helpers";

/** The console's audit page: the tenant's receipts, filtered, one receipt whole, and an export that verifies. */

const keys = createLocalJWKSet(
  publicJwks(parseUpstreamSigningKeys("AUDIT_SIGNING_KEYS", env.AUDIT_SIGNING_KEYS)),
);

describe("the console's audit page", () => {
  it("lists the receipts, filters them by run, shows one whole and exports them", async () => {
    const { run, id } = await askAcmeRefund("A1002", 1_100);
    await decide(id, "reject", "wrong order");
    const other = await askAcmeRefund("A1001", 1_200);
    await decide(other.id, "reject", "not now");
    const operator = await signedInOperator();

    const all = await operator.get("/console/audit");
    expect(all.status).toBe(200);
    expect(all.html).toContain("2 receipts, oldest first");
    expect(all.html).toContain('aria-current="page">Audit</a>');
    const mine = await operator.get(`/console/audit?run_id=${run.id}`);
    expect(mine.html).toContain("1 receipt, oldest first");
    expect(mine.html).toContain("<code>approval.rejected</code>");
    expect(mine.html).toContain(`href="/console/audit/export?run_id=${run.id}"`);

    const detail = await operator.get("/console/audit/1");
    expect(detail.status).toBe(200);
    expect(detail.html).toContain("Receipt 1: <code>approval.rejected</code>");
    expect(detail.html).toContain("0".repeat(64));
    expect(detail.html).toContain(`<code>${run.id}</code>`);

    const exported = await operator.send("/console/audit/export", { method: "GET" });
    expect(exported.headers.get("content-type")).toContain("application/x-ndjson");
    expect(await verifyExport(exported.html, keys)).toMatchObject({ ok: true, receipts: 2 });
    const filtered = await operator.send(`/console/audit/export?run_id=${other.run.id}`, { method: "GET" });
    expect(await verifyExport(filtered.html, keys, { allowGaps: true })).toMatchObject({
      ok: true,
      receipts: 1,
    });
  });

  it("says which filter is wrong, and finds no receipt of another tenant or past the chain", async () => {
    const operator = await signedInOperator();
    const bad = await operator.get("/console/audit?operator=dana&since=later");
    expect(bad.status).toBe(422);
    expect(bad.html).toContain("<strong>Operator id</strong>: not an operator id");
    expect(bad.html).toContain("<strong>Created from</strong>: not an ISO 8601");
    expect((await operator.get("/console/audit/999999")).status).toBe(404);
    expect((await operator.get("/console/audit/abc")).status).toBe(404);

    const globexRun = await openRun("globex");
    const asked = await callTool(globexRun, "issue_refund", refund("B2003", 5_000));
    expect(asked.body.error?.code).toBe("approval_required");
    await decide(asked.body.approval?.id ?? "", "reject", "no", "globex");
    const globex = await signedInOperator("globex");
    expect((await globex.get("/console/audit")).html).not.toContain("A1002");
    const acmeFirst = await operator.get("/console/audit/1");
    const globexFirst = await globex.get("/console/audit/1");
    expect(globexFirst.html).not.toEqual(acmeFirst.html);
    expect(globexFirst.html).toContain(globexRun.id);
  });
});
