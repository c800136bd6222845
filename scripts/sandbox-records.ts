// What `npm run sandbox -- <records> [options]` asks the sandbox's admin API (sandbox/API.md, "Admin"),
// read from its arguments, and how the answer is narrowed to one run. Pure: scripts/sandbox.ts
// connects, asks and prints.

/** One kind of record the command reads: its admin route, the list in the answer, its filters. */
interface RecordKind {
  path: string;
  /** The answer's list: `{ refunds: [...] }`. */
  list: string;
  /** Options passed to the route as query parameters: `--order` → `order_id`. */
  query: Readonly<Record<string, string>>;
  /**
   * How `--run` narrows it: the route filters by `run_id` itself (`query`), rows carry a `run_id`
   * to keep them by (`rows`), or it takes no run (`null`).
   */
  run: "query" | "rows" | null;
  help: string;
}

const TENANT = { "--tenant": "tenant" } as const;

export const RECORD_KINDS = {
  refunds: {
    path: "/_admin/refunds",
    list: "refunds",
    query: { ...TENANT, "--order": "order_id" },
    run: "rows",
    help: "refunds made [--order <id>] [--tenant <id>] [--run <id>]",
  },
  requests: {
    path: "/_admin/requests",
    list: "requests",
    query: {},
    run: "query",
    help: "every request the sandbox received, with its fault, status and key [--run <id>]",
  },
  tickets: {
    path: "/_admin/tickets",
    list: "tickets",
    query: TENANT,
    run: "rows",
    help: "tickets opened [--tenant <id>] [--run <id>]",
  },
  emails: {
    path: "/_admin/emails",
    list: "emails",
    query: TENANT,
    run: "rows",
    help: "emails queued [--tenant <id>] [--run <id>]",
  },
  drafts: {
    path: "/_admin/email-drafts",
    list: "drafts",
    query: TENANT,
    run: null,
    help: "email drafts [--tenant <id>]",
  },
  shipments: {
    path: "/_admin/shipments",
    list: "shipments",
    query: TENANT,
    run: "rows",
    help: "shipments, with the run of their last reroute [--tenant <id>] [--run <id>]",
  },
  notifications: {
    path: "/_admin/notifications",
    list: "notifications",
    query: {},
    run: null,
    help: "the approval webhooks the sandbox received",
  },
} as const satisfies Record<string, RecordKind>;

export type RecordKindName = keyof typeof RECORD_KINDS;

/** What to ask: the admin path with its query, the answer's list, and the run to keep rows of. */
export interface RecordsQuery {
  kind: RecordKindName;
  path: string;
  list: string;
  /** Rows are kept only when their `run_id` is this (for the routes that do not filter by run). */
  run: string | null;
  /** The proxy whose sandbox is read, when `--proxy` names one. */
  proxy: string | null;
}

export const SANDBOX_USAGE = [
  "usage: npm run sandbox -- <records> [options]",
  "reads the records of the sandbox behind a running `npm start` (sandbox/API.md, Admin), as JSON:",
  ...Object.entries(RECORD_KINDS).map(([name, kind]) => `  ${name.padEnd(14)}${kind.help}`),
  "options: --proxy <url> the proxy whose sandbox to read (default http://127.0.0.1:$PORT, PORT 8787)",
].join("\n");

const isKind = (name: string): name is RecordKindName => Object.hasOwn(RECORD_KINDS, name);

/** The query the arguments ask for, or the problem with them (shown with the usage). */
export function parseRecordsArgs(args: readonly string[]): RecordsQuery | { problem: string } {
  const [name, ...rest] = args;
  if (name === undefined || name.startsWith("-")) return { problem: "name the records to read" };
  if (!isKind(name)) return { problem: `no records called "${name}"` };
  const kind: RecordKind = RECORD_KINDS[name];
  const params = new URLSearchParams();
  let run: string | null = null;
  let proxy: string | null = null;
  for (let index = 0; index < rest.length; index += 2) {
    const option = rest[index] ?? "";
    const value = rest[index + 1];
    if (value === undefined || value.startsWith("--")) return { problem: `${option} needs a value` };
    if (option === "--run" && kind.run !== null) run = value;
    else if (option === "--proxy") proxy = value;
    else if (Object.hasOwn(kind.query, option)) params.set(kind.query[option] as string, value);
    else return { problem: `${name} takes no option ${option}` };
  }
  if (run !== null && kind.run === "query") params.set("run_id", run);
  const search = params.toString();
  return {
    kind: name,
    path: search ? `${kind.path}?${search}` : kind.path,
    list: kind.list,
    run: kind.run === "rows" ? run : null,
    proxy,
  };
}

/** The answer narrowed to the rows of one run, when the route could not do it itself. */
export function narrowToRun(answer: Record<string, unknown>, query: RecordsQuery): Record<string, unknown> {
  if (query.run === null) return answer;
  const rows = answer[query.list];
  if (!Array.isArray(rows)) return answer;
  return {
    ...answer,
    [query.list]: rows.filter((row) => (row as { run_id?: unknown }).run_id === query.run),
  };
}
