import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { ApprovalSummary } from "../../src/approvals/model";
import { callDigest } from "../../src/core/idempotency-key";
import type { ApprovalDirectory } from "../../src/ledger/directory";
import type { RunIndexEntry, RunSummary } from "../../src/wire/run-summary";
import { passDeadline } from "./clock";
import { eventually } from "./eventually";
import {
  asOperator,
  callTool,
  decide,
  deliverUncalledRun,
  directoryStubOf,
  expectQueryRefused,
  failDirectoryWritesOf,
  KEYS,
  ledgerStubOf,
  openRun,
  outboxTopicsOf,
  refund,
  request,
  restartDurableObject,
  type TestRun,
} from "./helpers";

type Tenant = "acme" | "globex";

function directoryOf(name: string) {
  return env.APPROVAL_DIRECTORY.get(
    env.APPROVAL_DIRECTORY.idFromName(name),
  ) as DurableObjectStub<ApprovalDirectory>;
}

async function approvalsPage(query: string, tenant: Tenant = "acme") {
  const { status, body } = await asOperator(`/v1/approvals?${query}`, {}, tenant);
  expect(status, JSON.stringify(body.error)).toBe(200);
  return body.data as { state: string; approvals: ApprovalSummary[]; next_cursor: string | null };
}

async function runsPage(query: string, tenant: Tenant = "acme") {
  const { status, body } = await asOperator(`/v1/runs?${query}`, {}, tenant);
  expect(status, JSON.stringify(body.error)).toBe(200);
  return body.data as { state: string; runs: RunSummary[]; next_cursor: string | null };
}

/** Follows next_cursor to the end, `limit` at a time; every page but the last is full. */
async function everyPage<T>(
  first: string,
  read: (query: string) => Promise<{ items: T[]; next_cursor: string | null }>,
  limit: number,
): Promise<T[]> {
  const items: T[] = [];
  let query = first;
  for (let pages = 0; pages < 100; pages++) {
    const page = await read(query);
    items.push(...page.items);
    if (page.next_cursor === null) return items;
    expect(page.items).toHaveLength(limit);
    query = `${first}&cursor=${encodeURIComponent(page.next_cursor)}`;
  }
  throw new Error("paging did not end");
}

/** The run as the directory lists it, once the ledger's write-through has arrived. */
async function indexedRun(run: TestRun, until: (entry: RunSummary) => boolean = () => true) {
  let found: RunSummary | undefined;
  await vi.waitFor(
    async () => {
      const { runs } = await runsPage("state=all&limit=100", run.tenant as Tenant);
      found = runs.find((entry) => entry.run_id === run.id);
      expect(found && until(found), JSON.stringify(found)).toBe(true);
    },
    { timeout: 5_000, interval: 50 },
  );
  return found as RunSummary;
}

/**
 * Runs `calls` with the tenant's directory refusing writes, once the ledger owes it nothing, and
 * checks that they left the ledger owing it nothing: a message they enqueued for the index would
 * still wait in the outbox. Instead of waiting to see whether a delivery in the background arrives,
 * the test looks at what the ledger stored with each call.
 */
async function withDirectoryDown(run: TestRun, calls: () => Promise<void>): Promise<void> {
  await eventually("the ledger's outbox delivered", async () =>
    (await outboxTopicsOf(run)).length === 0 ? true : undefined,
  );
  await failDirectoryWritesOf(run.tenant);
  try {
    await calls();
    expect(await outboxTopicsOf(run)).toEqual([]);
  } finally {
    await restartDurableObject(directoryStubOf(run.tenant));
  }
}

const hex = (n: number) => n.toString(16).padStart(24, "0");
const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);

describe("GET /v1/approvals: history and search", () => {
  it("lists every state with state=all, and filters by state, tool, run and subject", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { max_destructive: 3 } });
    const rejected = (await callTool(run, "issue_refund", refund("A1004", 110))).body.approval?.id ?? "";
    const executed = (await callTool(run, "issue_refund", refund("A1005", 120))).body.approval?.id ?? "";
    const pending = (await callTool(run, "issue_refund", refund("A1004", 130))).body.approval?.id ?? "";
    await decide(rejected, "reject", "not this one");
    await decide(executed, "approve");

    const all = await approvalsPage(`state=all&run_id=${run.id}`);
    expect(all.state).toBe("all");
    expect(all.next_cursor).toBeNull();
    expect(all.approvals.map((approval) => [approval.id, approval.state])).toEqual([
      [pending, "pending"],
      [executed, "executed"],
      [rejected, "rejected"],
    ]);
    const decided = all.approvals.find((approval) => approval.id === executed);
    expect(decided).toMatchObject({
      decided_by: expect.stringMatching(/^operator:/),
      decided_at: expect.any(String),
      args_digest: await callDigest("issue_refund", refund("A1005", 120)),
    });

    // The default is still the pending list.
    expect((await approvalsPage(`run_id=${run.id}`)).approvals.map((approval) => approval.id)).toEqual([
      pending,
    ]);
    expect((await approvalsPage(`state=rejected&run_id=${run.id}`)).approvals.map((a) => a.id)).toEqual([
      rejected,
    ]);
    expect((await approvalsPage(`state=all&tool=lookup_order&run_id=${run.id}`)).approvals).toEqual([]);

    // A bare id matches any argument ending in _id; key=value only that argument.
    const byValue = await approvalsPage(`state=all&subject=A1004&run_id=${run.id}`);
    expect(byValue.approvals.map((approval) => approval.id)).toEqual([pending, rejected]);
    const byKey = await approvalsPage(
      `state=all&subject=${encodeURIComponent("order_id=A1005")}&run_id=${run.id}`,
    );
    expect(byKey.approvals.map((approval) => approval.id)).toEqual([executed]);
    expect((await approvalsPage(`state=all&subject=customer_id%3DA1005&run_id=${run.id}`)).approvals).toEqual(
      [],
    );
    // Without the run filter the subject still finds this run's approvals among the tenant's.
    const tenantWide = await approvalsPage("state=all&subject=A1005&limit=100");
    expect(tenantWide.approvals.map((approval) => approval.id)).toContain(executed);
    for (const approval of tenantWide.approvals) expect(approval.args.order_id).toBe("A1005");
  });

  it("pages through more than a hundred approvals, newest first, each exactly once", async () => {
    const runId = `run_paging${unique()}`;
    const base = Date.parse("2026-01-10T00:00:00.000Z");
    const written: ApprovalSummary[] = [];
    const directory = directoryOf("acme");
    for (let i = 0; i < 130; i++) {
      const args = { order_id: `P${String(i).padStart(4, "0")}`, amount_cents: i };
      const summary: ApprovalSummary = {
        id: `apr_${unique()}${hex(i).slice(-12)}`,
        run_id: runId,
        tool: "paging_probe",
        side_effect: "destructive",
        state: i % 2 === 0 ? "executed" : "rejected",
        execution: i % 2 === 0 ? "executed" : "not_sent",
        args,
        args_digest: await callDigest("paging_probe", args),
        reasons: [],
        // Three approvals per second: ties on created_at are broken by id.
        created_at: new Date(base + Math.floor(i / 3) * 1000).toISOString(),
        expires_at: new Date(base + 86_400_000).toISOString(),
        sla_due_at: null,
        overdue: false,
        escalated_at: null,
        decided_at: null,
        decided_by: null,
        decided_by_name: null,
        approver_roles: [],
        approvals_required: 1,
        approvers: [],
        user: null,
      };
      written.push(summary);
      await directory.upsert(summary, "acme");
    }
    const seen = await everyPage(
      `state=all&run_id=${runId}&limit=7`,
      async (query) => {
        const page = await approvalsPage(query);
        return { items: page.approvals, next_cursor: page.next_cursor };
      },
      7,
    );
    const newestFirst = [...written].sort((a, b) =>
      a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at),
    );
    expect(seen.map((approval) => approval.id)).toEqual(newestFirst.map((approval) => approval.id));

    // The time window: since is inclusive, until exclusive; a date alone means the whole day.
    const window = await approvalsPage(
      `state=all&run_id=${runId}&since=2026-01-10T00:00:10Z&until=2026-01-10T00:00:12Z&limit=100`,
    );
    const inWindow = newestFirst.filter(
      (approval) =>
        approval.created_at >= "2026-01-10T00:00:10.000Z" && approval.created_at < "2026-01-10T00:00:12.000Z",
    );
    expect(inWindow).toHaveLength(6);
    expect(window.approvals.map((approval) => approval.id)).toEqual(inWindow.map((approval) => approval.id));
    expect((await approvalsPage(`state=all&run_id=${runId}&until=2026-01-09&limit=100`)).approvals).toEqual(
      [],
    );
    expect(
      (await approvalsPage(`state=all&run_id=${runId}&since=2026-01-10&until=2026-01-10&limit=100`))
        .approvals,
    ).toHaveLength(100);
    expect((await approvalsPage(`state=executed&run_id=${runId}&limit=100`)).approvals).toHaveLength(65);
  });

  it("lists a pending approval past its expiry as expired, and no longer as pending", async () => {
    const run = await openRun("acme", { namespace: "support", limits: { deadline_s: 60 } });
    const asked = await callTool(run, "issue_refund", refund("A1003", 140));
    const id = asked.body.approval?.id ?? "";
    expect((await approvalsPage(`run_id=${run.id}`)).approvals.map((approval) => approval.id)).toEqual([id]);
    // Past its expiry (the run's deadline), before any alarm has swept it.
    await passDeadline(run);
    expect((await approvalsPage(`run_id=${run.id}`)).approvals).toEqual([]);
    expect((await approvalsPage(`state=expired&run_id=${run.id}`)).approvals).toMatchObject([
      { id, state: "expired" },
    ]);
  });
});

describe("GET /v1/runs: the runs index", () => {
  it("lists runs as open, closed or expired, with the tools they called and the ids they named", async () => {
    const open = await openRun("acme");
    await callTool(open, "lookup_order", { order_id: "A1002" });
    await callTool(open, "get_customer_profile", { customer_id: "C101" });
    const closed = await openRun("acme");
    await request(`/v1/runs/${closed.id}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${closed.token}` },
    });
    const expired = await openRun("acme", { namespace: "support", limits: { deadline_s: 60 } });

    const indexed = await indexedRun(open, (entry) => entry.subjects.length === 2);
    expect(indexed).toMatchObject({
      namespace: "support",
      state: "open",
      ended_at: null,
      tools: ["get_customer_profile", "lookup_order"],
      subjects: ["customer_id=C101", "order_id=A1002"],
    });
    expect(indexed.deadline_at).toBe(open.data.deadline_at);
    expect((await indexedRun(closed, (entry) => entry.state === "closed")).ended_at).toEqual(
      expect.any(String),
    );
    await deliverUncalledRun(expired);
    await indexedRun(expired);
    await passDeadline(expired);

    const ids = async (state: string) =>
      (await runsPage(`state=${state}&limit=100`)).runs.map((entry) => entry.run_id);
    expect(await ids("open")).toContain(open.id);
    expect(await ids("open")).not.toContain(expired.id);
    expect(await ids("expired")).toContain(expired.id);
    expect(await ids("expired")).not.toContain(open.id);
    expect(await ids("closed")).toContain(closed.id);
    expect(await ids("closed")).not.toContain(open.id);
    expect(await ids("all")).toEqual(expect.arrayContaining([open.id, closed.id, expired.id]));

    expect((await runsPage("subject=C101&limit=100")).runs.map((entry) => entry.run_id)).toContain(open.id);
    expect(
      (await runsPage("subject=order_id%3DC101&limit=100")).runs.map((entry) => entry.run_id),
    ).not.toContain(open.id);
    const byTool = await runsPage("tool=get_customer_profile&limit=100");
    expect(byTool.runs.map((entry) => entry.run_id)).toContain(open.id);
    for (const entry of byTool.runs) expect(entry.tools).toContain("get_customer_profile");
  });

  it("hears of each new tool or id once, not of every call, even after the run's ledger restarted", async () => {
    const run = await openRun("acme");
    await callTool(run, "lookup_order", { order_id: "A1001" });
    expect((await indexedRun(run, (entry) => entry.calls_used === 1)).subjects).toEqual(["order_id=A1001"]);
    // The same tool and id again: nothing new, so the index is not written.
    await withDirectoryDown(run, async () => {
      await callTool(run, "lookup_order", { order_id: "A1001" });
      await callTool(run, "lookup_order", { order_id: "A1001" });
    });
    expect((await indexedRun(run)).calls_used).toBe(1);
    await callTool(run, "lookup_order", { order_id: "A1003" });
    expect((await indexedRun(run, (entry) => entry.calls_used === 4)).subjects).toEqual([
      "order_id=A1001",
      "order_id=A1003",
    ]);

    // A restarted ledger remembers what it told (stored with the run): the same tool and id again is not news.
    await restartDurableObject(ledgerStubOf(run));
    await withDirectoryDown(run, async () => {
      await callTool(run, "lookup_order", { order_id: "A1001" });
    });
    expect((await indexedRun(run)).calls_used).toBe(4);
    // A new id is, and the entry keeps what it was told before the restart.
    await callTool(run, "lookup_order", { order_id: "A1002" });
    const after = await indexedRun(run, (entry) => entry.calls_used === 6);
    expect(after).toMatchObject({
      tools: ["lookup_order"],
      subjects: ["order_id=A1001", "order_id=A1002", "order_id=A1003"],
    });
  });

  it("pages through more than a hundred runs, newest first, each exactly once", async () => {
    const ticket = `ticket_id=T-${unique()}`;
    const base = Date.parse("2026-02-01T00:00:00.000Z");
    const directory = directoryOf("acme");
    const written: RunIndexEntry[] = [];
    for (let i = 0; i < 105; i++) {
      const entry: RunIndexEntry = {
        run_id: `run_${unique()}${hex(i).slice(-8)}`,
        namespace: "support",
        state: "closed",
        created_at: new Date(base + Math.floor(i / 2) * 1000).toISOString(),
        deadline_at: new Date(base + 3_600_000).toISOString(),
        ended_at: new Date(base + 60_000).toISOString(),
        calls_used: i,
        tools: ["lookup_order"],
        subjects: [ticket],
        last_activity_at: new Date(base + 60_000).toISOString(),
      };
      written.push(entry);
      await directory.indexRun(entry);
    }
    const seen = await everyPage(
      `subject=${encodeURIComponent(ticket)}&limit=10`,
      async (query) => {
        const page = await runsPage(query);
        return { items: page.runs, next_cursor: page.next_cursor };
      },
      10,
    );
    const newestFirst = [...written].sort((a, b) =>
      a.created_at === b.created_at
        ? b.run_id.localeCompare(a.run_id)
        : b.created_at.localeCompare(a.created_at),
    );
    expect(seen.map((entry) => entry.run_id)).toEqual(newestFirst.map((entry) => entry.run_id));
    expect(seen.every((entry) => entry.state === "closed")).toBe(true);
  });

  it("keeps a closed run closed and its ids merged, whatever order the writes arrive in", async () => {
    const directory = directoryOf("acme");
    const runId = `run_order${unique()}`;
    const at = (s: number) => new Date(Date.parse("2026-03-01T00:00:00Z") + s * 1000).toISOString();
    const entry: RunIndexEntry = {
      run_id: runId,
      namespace: "support",
      state: "open",
      created_at: at(0),
      deadline_at: at(3600),
      ended_at: null,
      calls_used: 1,
      tools: ["lookup_order"],
      subjects: ["order_id=A1001"],
      last_activity_at: at(1),
    };
    await directory.indexRun({
      ...entry,
      state: "closed",
      ended_at: at(9),
      calls_used: 3,
      last_activity_at: at(9),
    });
    await directory.indexRun({ ...entry, tools: ["issue_refund"], subjects: ["order_id=A1002"] });
    const page = await runsPage(`subject=A1002&since=${at(0)}&until=${at(1)}`);
    expect(page.runs).toEqual([
      {
        ...entry,
        state: "closed",
        ended_at: at(9),
        calls_used: 3,
        tools: ["issue_refund", "lookup_order"],
        subjects: ["order_id=A1001", "order_id=A1002"],
        last_activity_at: at(9),
      },
    ]);
  });
});

describe("the operator's lists across tenants", () => {
  it("never shows one tenant's approvals or runs to another tenant's operator", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", refund("A1001", 150));
    const id = asked.body.approval?.id ?? "";
    await indexedRun(run, (entry) => entry.subjects.includes("order_id=A1001"));

    expect((await approvalsPage(`state=all&run_id=${run.id}`, "globex")).approvals).toEqual([]);
    const globexApprovals = await approvalsPage("state=all&limit=100", "globex");
    expect(globexApprovals.approvals.map((approval) => approval.id)).not.toContain(id);
    const globexRuns = await runsPage("state=all&limit=100", "globex");
    expect(globexRuns.runs.map((entry) => entry.run_id)).not.toContain(run.id);
    expect((await runsPage("subject=A1001&limit=100", "globex")).runs).toEqual([]);
    // And the acme operator does see it.
    expect(
      (await approvalsPage(`state=all&run_id=${run.id}`)).approvals.map((approval) => approval.id),
    ).toEqual([id]);
  });

  it("refuses other credentials on GET /v1/runs", async () => {
    const run = await openRun("acme");
    const none = await request("/v1/runs");
    expect(none.status).toBe(401);
    for (const credential of [KEYS.acme, run.token]) {
      const refused = await request("/v1/runs", { headers: { authorization: `Bearer ${credential}` } });
      expect(refused.status).toBe(403);
      expect(refused.body.error?.code).toBe("permission_error");
    }
  });
});

describe("bad list parameters", () => {
  it.each([
    ["/v1/approvals?state=maybe", "query.state", '"maybe" is not an allowed value'],
    ["/v1/runs?state=pending", "query.state", '"pending" is not an allowed value'],
    ["/v1/approvals?cursor=bm90LWEtY3Vyc29y", "query.cursor", "not a cursor this list gave"],
    ["/v1/runs?cursor=%25%25", "query.cursor", "not a cursor this list gave"],
    ["/v1/approvals?since=yesterday", "query.since", "not an ISO 8601 date or date-time"],
    ["/v1/runs?until=2026-13-45", "query.until", "not an ISO 8601 date or date-time"],
    ["/v1/runs?since=2026-05-02&until=2026-05-01", "query.until", "must be later than since"],
    ["/v1/approvals?limit=0", "query.limit", "must be at least 1"],
    ["/v1/runs?limit=101", "query.limit", "must be at most 100"],
    ["/v1/approvals?limit=ten", "query.limit", "not a whole number"],
    ["/v1/approvals?run_id=other", "query.run_id", "not a run id"],
    ["/v1/runs?tool=Issue%20Refund", "query.tool", "not a tool name"],
    ["/v1/runs?subject=order_id%3D", "query.subject", "names a key but no value"],
    ["/v1/runs?subjet=A1002", "query.subjet", "unknown field"],
  ])("%s is a validation_error naming %s", (path, field, reason) => expectQueryRefused(path, field, reason));
});

describe("a directory written before history and search", () => {
  it("is migrated in place: old rows gain their tool, digest and subjects, and list as before", async () => {
    const name = `legacy-${unique()}`;
    const args = { order_id: "A1002", amount_cents: 500, reason: "user_cancel" };
    const old = {
      id: `apr_${unique()}`,
      run_id: `run_${unique()}`,
      tool: "issue_refund",
      side_effect: "destructive",
      state: "executed",
      args,
      reasons: ["refunds need a human"],
      created_at: "2026-04-01T10:00:00.000Z",
      expires_at: "2026-04-02T10:00:00.000Z",
      decided_by: "operator:0123456789ab",
    };
    await runInDurableObject(directoryOf(name), (_instance, state) => {
      // The table as the first deploy created it, with no schema version recorded.
      state.storage.sql.exec(`
        DROP TABLE approvals; DROP TABLE runs; DROP TABLE schema_version;
        CREATE TABLE approvals (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, state TEXT NOT NULL,
          created_at TEXT NOT NULL, expires_at TEXT NOT NULL, summary TEXT NOT NULL);
        CREATE INDEX approvals_by_state ON approvals (state, created_at);`);
      state.storage.sql.exec(
        "INSERT INTO approvals (id, run_id, state, created_at, expires_at, summary) VALUES (?, ?, ?, ?, ?, ?)",
        old.id,
        old.run_id,
        old.state,
        old.created_at,
        old.expires_at,
        JSON.stringify(old),
      );
    });
    await restartDurableObject(directoryOf(name));

    const directory = directoryOf(name);
    const listed = await directory.listApprovals({
      state: "all",
      subject: { key: "order_id", value: "A1002" },
    });
    expect(listed).toEqual({
      approvals: [
        {
          ...old,
          args_digest: await callDigest("issue_refund", args),
          decided_at: null,
          decided_by_name: null,
          sla_due_at: null,
          overdue: false,
          escalated_at: null,
          // Stored before summaries named who may decide: any operator, one approval.
          approver_roles: [],
          approvals_required: 1,
          approvers: [],
          // Stored before approvals named their user: none.
          user: null,
          // Stored before executions were recorded: what an executed one's call did is not known here.
          execution: null,
          duplicates: 0,
        },
      ],
      next_cursor: null,
    });
    expect(await directory.listApprovals({ state: "all", tool: "issue_refund" })).toMatchObject({
      approvals: [{ id: old.id }],
    });
    await runInDurableObject(directory, (_instance, state) => {
      const version = state.storage.sql.exec<{ version: number }>("SELECT version FROM schema_version").one();
      expect(version.version).toBe(2);
      const columns = state.storage.sql
        .exec<{ name: string }>("SELECT name FROM pragma_table_info('approvals')")
        .toArray()
        .map((column) => column.name);
      expect(columns).toEqual(expect.arrayContaining(["tool", "args_digest", "decided_at", "subjects"]));
      const indexes = state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'approvals'",
        )
        .toArray()
        .map((index) => index.name);
      expect(indexes).toContain("approvals_by_tool_digest");
    });
  });
});
