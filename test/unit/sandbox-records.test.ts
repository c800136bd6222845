import { describe, expect, it } from "vitest";
import { narrowToRun, parseRecordsArgs, SANDBOX_USAGE } from "../../scripts/sandbox-records";
import { stackRegistry } from "../../scripts/stack-record.mjs";

/**
 * `npm run sandbox -- <records> [options]`: which admin route of the sandbox it asks, and how the
 * answer is kept to one run. (test/e2e/fresh-clone-commands.test.ts runs it against `npm start`.)
 */
describe("the sandbox records command's arguments", () => {
  it("asks the admin route of the records named, with their filters", () => {
    expect(parseRecordsArgs(["refunds", "--order", "A1001"])).toEqual({
      kind: "refunds",
      path: "/_admin/refunds?order_id=A1001",
      list: "refunds",
      run: null,
      proxy: null,
    });
    expect(
      parseRecordsArgs(["tickets", "--tenant", "acme", "--proxy", "http://127.0.0.1:8788"]),
    ).toMatchObject({
      path: "/_admin/tickets?tenant=acme",
      proxy: "http://127.0.0.1:8788",
    });
    expect(parseRecordsArgs(["drafts"])).toMatchObject({ path: "/_admin/email-drafts", list: "drafts" });
  });

  it("passes a run to the route that filters by it, and keeps the rows of that run elsewhere", () => {
    expect(parseRecordsArgs(["requests", "--run", "run_1"])).toMatchObject({
      path: "/_admin/requests?run_id=run_1",
      run: null,
    });
    const refunds = parseRecordsArgs(["refunds", "--run", "run_1"]);
    if ("problem" in refunds) throw new Error(refunds.problem);
    expect(refunds).toMatchObject({ path: "/_admin/refunds", run: "run_1" });
    const answer = {
      refunds: [
        { refund_id: "re_1", run_id: "run_1" },
        { refund_id: "re_2", run_id: "run_2" },
      ],
    };
    expect(narrowToRun(answer, refunds)).toEqual({ refunds: [{ refund_id: "re_1", run_id: "run_1" }] });
  });

  it("refuses what it does not know, naming it", () => {
    expect(parseRecordsArgs([])).toEqual({ problem: "name the records to read" });
    expect(parseRecordsArgs(["refund"])).toEqual({ problem: 'no records called "refund"' });
    expect(parseRecordsArgs(["refunds", "--order"])).toEqual({ problem: "--order needs a value" });
    expect(parseRecordsArgs(["refunds", "--ordr", "A1001"])).toEqual({
      problem: "refunds takes no option --ordr",
    });
    expect(parseRecordsArgs(["drafts", "--run", "run_1"])).toEqual({
      problem: "drafts takes no option --run",
    });
    expect(SANDBOX_USAGE).toContain("npm run sandbox -- <records> [options]");
  });
});

describe("the dev registry of `npm start`", () => {
  it("is the checkout's own, per port, unless WRANGLER_REGISTRY_PATH names one", () => {
    expect(stackRegistry("/src/proxy", 8787, {})).toBe("/src/proxy/.wrangler/registry/8787");
    expect(stackRegistry("/src/other", 8787, {})).toBe("/src/other/.wrangler/registry/8787");
    expect(stackRegistry("/src/proxy", "8788", { WRANGLER_REGISTRY_PATH: "/shared" })).toBe("/shared");
  });
});
