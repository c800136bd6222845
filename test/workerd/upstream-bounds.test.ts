import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ANSWER_BOUNDS } from "../../src/core/answer-bounds";
import { ResultStore } from "../../src/ledger/result-store";
import { capResult } from "../../src/shaping/cap";
import { callTool, ledgerStubOf, openRun, sandbox, sandboxRequests, type TestRun, traceOf } from "./helpers";

/**
 * Every upstream answer is bounded before it is held: an HTTP API or a remote MCP server that
 * answers with a 30 MB string, a 5 MB item, 200,000 items, nesting 100,000 deep or a stream that
 * never ends gets its call a terminal `upstream_too_large` naming the bound, never a crash, a 500
 * or an invitation to call again; and the isolate keeps serving everyone else meanwhile.
 */

const HOSTILE = [
  ["huge_string", "string"],
  ["huge_item", "string"],
  ["many_items", "items"],
  ["deep_nesting", "depth"],
  ["endless_stream", "bytes"],
] as const;

function expectTooLarge(
  answer: Awaited<ReturnType<typeof callTool>>,
  bound: keyof typeof ANSWER_BOUNDS,
  certainty: boolean | null,
) {
  const { status, body } = answer;
  expect(status, JSON.stringify(body.error)).toBe(502);
  expect(body.outcome).toBe("terminal_failure");
  expect(body.data).toBeNull();
  expect(body.error).toMatchObject({
    code: "upstream_too_large",
    retryable: false,
    side_effect_confirmed: certainty,
    details: { limit: bound, max: ANSWER_BOUNDS[bound] },
  });
  expect(body.error?.message).not.toMatch(/call again with|retrying is safe/i);
}

describe("an HTTP upstream's answer past a bound", () => {
  it.each(HOSTILE)("%s is a terminal upstream_too_large naming the %s bound", async (mode, bound) => {
    const run = await openRun("acme");
    const answer = await callTool(
      run,
      "search_refund_policy",
      { query: "refund" },
      { "x-sandbox-fault": mode },
    );
    expectTooLarge(answer, bound, false);
    // One attempt: the same request would bring the same answer.
    const [entry] = await traceOf(run);
    expect(entry?.upstream_attempts).toHaveLength(1);
  });

  it("of a write whose answer is kept by key, is read back, and the ticket exists once", async () => {
    const run = await openRun("acme");
    const args = { customer_id: "C101", priority: "normal", summary: "Answer too large to keep." };
    const { body } = await callTool(run, "create_internal_ticket", args, {
      "x-sandbox-fault": "huge_string",
    });
    const tickets = (
      await sandbox<{ tickets: Array<{ ticket_id: string; run_id: string }> }>("/_admin/tickets?tenant=acme")
    ).tickets.filter((ticket) => ticket.run_id === run.id);
    expect(tickets).toHaveLength(1);
    expect(body.outcome, JSON.stringify(body.error)).toBe("success");
    expect((body.data as { ticket_id: string }).ticket_id).toBe(tickets[0]?.ticket_id);
  });
});

async function notesAdded(): Promise<number> {
  const { count } = await sandbox<{ count: number }>(
    "/_admin/helpdesk/effects?tenant=acme&tool=add_ticket_note",
  );
  return count;
}

describe("a remote MCP server's answer past a bound", () => {
  it.each(HOSTILE)("%s is a terminal upstream_too_large naming the %s bound", async (mode, bound) => {
    const run = await openRun("acme", { namespace: "helpdesk" });
    const answer = await callTool(run, "search_articles", { query: "password" }, { "x-sandbox-fault": mode });
    expectTooLarge(answer, bound, false);
  });

  it("of a write says the effect is unknown, never absent, and the note exists once", async () => {
    const run = await openRun("acme", { namespace: "helpdesk" });
    const before = await notesAdded();
    const args = { ticket_id: "HD-1002", body: `Answered with 30 MB (${run.id}).` };
    const answer = await callTool(run, "add_ticket_note", args, { "x-sandbox-fault": "huge_string" });
    expectTooLarge(answer, "string", null);
    expect(answer.body.error?.recommended_next_action).toBe("reconcile");
    expect(await notesAdded()).toBe(before + 1);
  });
});

describe("a hostile answer in flight", () => {
  it("leaves another tenant's reads served while it streams", async () => {
    const hostileRun = await openRun("acme", { namespace: "helpdesk" });
    const other = await openRun("globex");
    let hostileDone = false;
    const hostile = callTool(
      hostileRun,
      "search_articles",
      { query: "password" },
      {
        "x-sandbox-fault": "endless_stream",
      },
    ).finally(() => {
      hostileDone = true;
    });
    await streaming(hostileRun);

    const read = await callTool(other, "lookup_order", { order_id: "B2001" });
    expect(read.body.outcome, JSON.stringify(read.body.error)).toBe("success");
    expect(hostileDone).toBe(false);
    expectTooLarge(await hostile, "bytes", false);
  });
});

/** Until the sandbox has been asked for the hostile call's answer: its stream is then being read. */
async function streaming(run: TestRun): Promise<void> {
  for (let polls = 0; polls < 200; polls++) {
    const requests = await sandboxRequests(run.id);
    if (requests.some((entry) => entry.path === "/mcp" && entry.method === "POST" && entry.status === 200))
      return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("the hostile call never reached the sandbox");
}

describe("a kept result with an item of 5 MB", () => {
  it("is stored across pages the run's storage accepts, and read back whole, a piece at a time", async () => {
    const run = await openRun("acme");
    // Within every bound (no string over 1 MiB), and far over SQLite's 2 MB per row in one item.
    const item = { id: "big", parts: Array.from({ length: 10 }, (_, index) => `${index}`.repeat(500_000)) };
    const capped = capResult({ results: [{ id: "a" }, item] }, 16 * 1024);
    if (capped.kind !== "paged") throw new Error("expected pages");
    const handle = "res_0123456789abcdef01234567";
    // A call first, so the run's ledger has its storage.
    expect((await callTool(run, "lookup_order", { order_id: "A1001" })).body.outcome).toBe("success");
    const pieces = await runInDurableObject(ledgerStubOf(run), (_instance, state) => {
      const store = new ResultStore(state.storage.sql);
      store.savePages(handle, "search_refund_policy", capped.summary, capped.pages);
      const texts: string[] = [];
      for (let cursor = 0; cursor < capped.pages.length; cursor++) {
        const page = store.page(handle, cursor);
        if (page?.item === 1 && page.text !== undefined) texts.push(page.text);
      }
      return texts;
    });
    // And the agent reads a piece like any page.
    const { body } = await callTool(run, "read_result_page", { handle, cursor: 1 });
    expect(body.outcome, JSON.stringify(body.error)).toBe("success");
    expect(body.data).toMatchObject({ item: 1, text: pieces[0], next_cursor: 2 });
    expect(JSON.parse(pieces.join(""))).toEqual(item);
  });
});
