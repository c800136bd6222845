import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { upstreamSummary } from "../../src/console/views/run-page";
import { issueUpstreamCredential } from "../../src/upstream/credential";
import type { TraceEntry } from "../../src/wire/trace-entry";
import { callTool, openRun, sandbox, sandboxRequests, type TestRun, traceOf } from "./helpers";
import { configuredSigningKeys } from "./upstream-credentials";

/**
 * Postconditions of writes: a 2xx is a claim, the read afterwards is the fact. Driven through the
 * proxy with the sandbox's `silent_failure` (the write answers 201 with a new id, then is rolled
 * back) and checked against the sandbox's own records.
 */

const TICKET = {
  customer_id: "C102",
  priority: "high",
  summary: "Customer needs a call about a delayed replacement.",
};

async function ticketsOfRun(run: TestRun): Promise<Array<Record<string, unknown>>> {
  const body = await sandbox<{ tickets: Array<Record<string, unknown>> }>(
    `/_admin/tickets?tenant=${run.tenant}`,
  );
  return body.tickets.filter((ticket) => ticket.run_id === run.id);
}

async function entryOf(run: TestRun, tool: string): Promise<TraceEntry> {
  const entry = (await traceOf(run)).find((candidate) => candidate.tool === tool);
  expect(entry, `a trace entry for ${tool}`).toBeDefined();
  return entry as unknown as TraceEntry;
}

/** The sandbox's ticket read, straight, with a credential for `tool` naming `tenant`. */
async function readTicket(ticketId: string, tenant: string, tool = "lookup_ticket"): Promise<Response> {
  const target = `/tickets/${encodeURIComponent(ticketId)}`;
  const credential = await issueUpstreamCredential(
    {
      tenant,
      run: crypto.randomUUID(),
      tool,
      exp: Date.now() + 60_000,
      request: { method: "GET", target, body: null, idempotency_key: null },
    },
    configuredSigningKeys(),
  );
  return env.ORDERS_API.fetch(`https://upstream.internal${target}`, {
    headers: { authorization: `Bearer ${credential}` },
  });
}

describe("postcondition of create_internal_ticket", () => {
  it("turns a ticket that answered 201 but was never kept into a silent_failure to reconcile", async () => {
    const run = await openRun("acme");
    const { body } = await callTool(run, "create_internal_ticket", TICKET, {
      "x-sandbox-fault": "silent_failure",
    });
    expect(body.outcome).toBe("terminal_failure");
    expect(body.error).toMatchObject({
      code: "silent_failure",
      recommended_next_action: "reconcile",
      // What is known: the read found no ticket, so the effect is known not to have happened.
      side_effect_confirmed: false,
      external_id: expect.stringMatching(/^tk_/),
    });
    expect(body.error?.message).toMatch(/no such ticket/);
    expect(body.observed_state).toMatchObject({
      postcondition: { tool: "lookup_ticket", verified: false, observed: null },
    });
    expect(await ticketsOfRun(run)).toEqual([]);

    // The upstream saw the write once and the check once, with the check's own credential.
    const seen = (await sandboxRequests(run.id)).filter((entry) => entry.phase === "completed");
    expect(
      seen.map(({ method, path, status, fault, tool }) => ({ method, status, fault, tool, path })),
    ).toEqual([
      {
        method: "POST",
        path: "/tickets",
        status: 201,
        fault: "silent_failure",
        tool: "create_internal_ticket",
      },
      {
        method: "GET",
        path: `/tickets/${body.error?.external_id}`,
        status: 404,
        fault: null,
        tool: "lookup_ticket",
      },
    ]);

    // The trace shows one attempt at the effect and, apart from it, one check.
    const entry = await entryOf(run, "create_internal_ticket");
    expect(entry.outcome).toBe("terminal_failure");
    expect(entry.error_code).toBe("silent_failure");
    expect(
      entry.upstream_attempts.map(({ purpose, upstream_status }) => ({ purpose, upstream_status })),
    ).toEqual([
      { purpose: "effect", upstream_status: 201 },
      { purpose: "check", upstream_status: 404 },
    ]);
    expect(upstreamSummary(entry)).toBe("HTTP 201 · 1 effect · 1 check: HTTP 404");
  });

  it("confirms a real ticket by reading it back", async () => {
    const run = await openRun("acme");
    const { body } = await callTool(run, "create_internal_ticket", TICKET);
    expect(body.outcome).toBe("success");
    const ticket = body.data as { ticket_id: string };
    expect(body.observed_state).toMatchObject({
      postcondition: { tool: "lookup_ticket", verified: true, observed: { ticket_id: ticket.ticket_id } },
    });
    expect((await ticketsOfRun(run)).map((row) => row.ticket_id)).toEqual([ticket.ticket_id]);
    const entry = await entryOf(run, "create_internal_ticket");
    expect(
      entry.upstream_attempts.map(({ purpose, upstream_status }) => ({ purpose, upstream_status })),
    ).toEqual([
      { purpose: "effect", upstream_status: 201 },
      { purpose: "check", upstream_status: 200 },
    ]);
    expect(upstreamSummary(entry)).toBe("HTTP 201 · 1 effect · 1 check: HTTP 200");
  });

  it("keeps the refund's postcondition apart from its attempts too", async () => {
    const run = await openRun("globex");
    const { body } = await callTool(run, "issue_refund", {
      order_id: "B2005",
      amount_cents: 100,
      reason: "out_of_stock",
    });
    expect(body.outcome).toBe("success");
    expect(body.observed_state).toMatchObject({ postcondition: { tool: "lookup_order", verified: true } });
    const entry = await entryOf(run, "issue_refund");
    expect(entry.upstream_attempts.map((attempt) => attempt.purpose)).toEqual(["effect", "check"]);
  });
});

describe("sandbox GET /tickets/{ticket_id}", () => {
  it("shows a tenant only its own tickets, and only to the lookup_ticket credential", async () => {
    const run = await openRun("acme");
    const { body } = await callTool(run, "create_internal_ticket", {
      ...TICKET,
      summary: "A ticket only acme may read back.",
    });
    const ticketId = (body.data as { ticket_id: string }).ticket_id;

    const own = await readTicket(ticketId, "acme");
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ ticket_id: ticketId, customer_id: "C102", status: "open" });

    // Another tenant's ticket is as absent as one never created.
    const other = await readTicket(ticketId, "globex");
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ error: { code: "not_found" } });
    expect((await readTicket("tk_doesnotexist", "acme")).status).toBe(404);

    // The credential's audience is the tool of the endpoint: the write's credential cannot read.
    expect((await readTicket(ticketId, "acme", "create_internal_ticket")).status).toBe(401);
    expect((await readTicket(ticketId, "acme", "lookup_order")).status).toBe(401);
  });
});
