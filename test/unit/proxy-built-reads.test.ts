import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { readDecisionContext } from "../../src/console/decision-context";
import type { Env } from "../../src/env";
import { buildRequest, type Execution } from "../../src/machine/request";
import { type ResultKeeper, shapeResult } from "../../src/machine/shape";
import { validateArguments } from "../../src/machine/validate";
import { catalog } from "../../src/tools";
import { propertyPlans } from "../property-plan";

const plan = propertyPlans(process.env);

/**
 * Reads the proxy builds itself, not the model: a postcondition's and a decision context's.
 *
 * The postcondition's read is built from the call and the upstream's answer: `create_internal_ticket`
 * reads back the ticket its answer names, with `lookup_ticket` (`GET /tickets/{ticket_id}`). An
 * answer naming its ticket "" or ".." must not make that read name another resource: the URL
 * resolves `/tickets/..` to `/`, whose 404 would be taken for the ticket's absence and turn a real
 * ticket into a `silent_failure`. The read's arguments are checked as an agent's call of
 * `lookup_ticket` would be; arguments it refuses leave the success standing, unverified.
 */

const WRITE = catalog.find("support", "create_internal_ticket") as ToolSpec;
const READ = catalog.find("support", "lookup_ticket") as ToolSpec;
const ARGS = { customer_id: "C101", priority: "normal", summary: "Customer asked for a call back." };
const CRM = "https://crm.example";

const keeper: ResultKeeper = {
  savePages: () => undefined,
  observeVersion: () => ({ stale: false, newest_seen: null, record: null }),
};

/** The CRM holds one ticket, `kept`; every other path answers 404, as a real one would. */
async function shapeClaim(claimedId: string, kept: string) {
  const claimed = { ...ARGS, ticket_id: claimedId, status: "open", created_at: "2026-12-04T00:00:00Z" };
  const paths: string[] = [];
  const observe = async (tool: ToolSpec, args: Record<string, unknown>): Promise<Execution> => {
    const path = new URL(buildRequest(tool, args, { key: null, callId: "call_check" }).target, CRM).pathname;
    paths.push(path);
    if (path === `/tickets/${encodeURIComponent(kept)}`)
      return { ok: true, data: claimed, status: 200, attempts: [] };
    return {
      ok: false,
      status: 404,
      attempts: [],
      failure: { code: "not_found", message: "No such ticket.", side_effect_confirmed: false },
    };
  };
  const shaped = await shapeResult(
    {
      callId: "call_write",
      fenceMarker: "fence0000000",
      alreadyTainted: false,
      results: keeper,
      findTool: (name) => catalog.find("support", name),
      observe,
    },
    WRITE,
    ARGS,
    claimed,
  );
  return { shaped, paths };
}

describe("a postcondition's read of an id from the upstream's answer", () => {
  it.each(["", ".", ".."])("leaves a ticket answered as %j unverified, and reads nothing", async (id) => {
    const { shaped, paths } = await shapeClaim(id, id);
    expect(paths).toEqual([]);
    expect(shaped.failure).toBeNull();
    expect(shaped.observed?.postcondition).toEqual({
      tool: "lookup_ticket",
      verified: null,
      error: "validation_error",
      fields: ["ticket_id"],
    });
  });

  it("still reads back a ticket it may name, and reports one the CRM does not hold", async () => {
    expect((await shapeClaim("tk_1", "tk_1")).shaped.observed?.postcondition).toMatchObject({
      verified: true,
    });
    const missing = await shapeClaim("tk_2", "tk_1");
    expect(missing.paths).toEqual(["/tickets/tk_2"]);
    expect(missing.shaped.failure).toMatchObject({ code: "silent_failure", side_effect_confirmed: false });
  });

  it("property: reads only what lookup_ticket accepts, always the claimed ticket's own path", async () => {
    const id = fc.oneof(
      fc.constantFrom("", ".", "..", "%2e%2e", "../orders", "a/b", "?x=1#y", "x".repeat(65)),
      fc.string({ maxLength: 70 }),
      fc.stringMatching(/^[./a-z%?#]{0,6}$/),
    );
    await fc.assert(
      fc.asyncProperty(id, async (claimedId) => {
        const { shaped, paths } = await shapeClaim(claimedId, claimedId);
        const accepted = validateArguments(READ.input, { ticket_id: claimedId }).ok;
        if (!accepted) {
          expect(paths).toEqual([]);
          expect(shaped.observed?.postcondition).toMatchObject({ verified: null, error: "validation_error" });
          return;
        }
        // One read, of the one ticket the answer named: never a 404 of another path.
        expect(paths).toEqual([`/tickets/${encodeURIComponent(claimedId)}`]);
        expect(shaped.failure).toBeNull();
      }),
      plan({ seed: 20261204, numRuns: 300 }),
    );
  });
});

/**
 * A decision context reads with arguments taken from the approval's: `issue_refund` reads its
 * order with `lookup_order` (`GET /orders/{order_id}`). A value the write accepted that the read
 * refuses (a catalog whose two tools disagree) is named on the page, and nothing is read.
 */
describe("a decision context's read of the approval's arguments", () => {
  it.each(["", ".", ".."])("names the order %j it cannot ask about, and reads nothing", async (order) => {
    const reached: string[] = [];
    // Any use of the environment (an upstream binding, a signing key) would be a read: recorded.
    const env = new Proxy({} as Env, {
      get: (_target, name) => {
        reached.push(String(name));
        return undefined;
      },
    });
    const view = await readDecisionContext(
      env,
      {
        tool: "issue_refund",
        tenant: "acme",
        run_id: "run_context",
        args: { order_id: order, amount_cents: 900, reason: "user_cancel" },
      },
      "support",
    );
    expect(reached).toEqual([]);
    expect(view).toEqual({
      source: "lookup_order",
      facts: [],
      problem:
        "lookup_order cannot be asked about this call: its arguments do not fit lookup_order (order_id). Judge the call without it.",
    });
  });
});
