import { lazily } from "../core/lazily";
import { createSchema, migrateExisting } from "../core/sql-migrations";
import { squashMigrations } from "../core/sql-squash";
import { APPROVALS_SCHEMA } from "./approval-store";
import { CLAIMS_SCHEMA } from "./claim-store";
import { OUTBOX_SCHEMA } from "./outbox";
import { RESULTS_SCHEMA } from "./result-store";
import { SCENARIO_SCHEMA } from "./scenario-store";

/**
 * The RunLedger's SQLite schema, as ordered migrations (the one place its tables are declared) and
 * as the one script they add up to (`ledgerSchema`, at the end). One database per run: a new run's
 * is created from that script in one batch; a ledger created by an older deploy applies the
 * migrations past its recorded `schema_version` before it serves anything.
 */
const V1 = `
CREATE TABLE IF NOT EXISTS run (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  tenant TEXT NOT NULL,
  run_id TEXT NOT NULL,
  namespace TEXT NOT NULL,
  environment TEXT NOT NULL,
  catalog_version TEXT NOT NULL,
  limits TEXT NOT NULL,
  repeat_threshold INTEGER NOT NULL,
  state TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  deadline_at INTEGER NOT NULL,
  ended_at INTEGER,
  calls_used INTEGER NOT NULL DEFAULT 0,
  writes_used INTEGER NOT NULL DEFAULT 0,
  destructive_used INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS idempotency (
  key TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  state TEXT NOT NULL,
  envelope TEXT,
  upstream_sends INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS trace (
  seq INTEGER PRIMARY KEY,
  call_id TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  tool TEXT,
  side_effect TEXT,
  args TEXT NOT NULL,
  call_digest TEXT NOT NULL,
  outcome TEXT NOT NULL,
  error_code TEXT,
  upstream_status INTEGER,
  latency_ms INTEGER,
  idempotency_key TEXT,
  replayed INTEGER NOT NULL DEFAULT 0,
  attempts TEXT NOT NULL DEFAULT '[]',
  catalog_version TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trace_by_digest ON trace (call_digest);
`;

const V2 = `${APPROVALS_SCHEMA}
ALTER TABLE trace ADD COLUMN actor TEXT NOT NULL DEFAULT 'agent';
`;

const V3 = `${RESULTS_SCHEMA}
ALTER TABLE run ADD COLUMN fence_marker TEXT NOT NULL DEFAULT '';
ALTER TABLE run ADD COLUMN tainted_by TEXT;
ALTER TABLE trace ADD COLUMN result TEXT;
`;

/** The run's fault scenario (sandbox only): its steps and the uses left of each. */
const V4 = SCENARIO_SCHEMA;

/**
 * Each key keeps the exact request it sends and its side effect, so any later attempt (a resend, an
 * operator's approval) sends the same bytes; trace entries are completed by their call id.
 */
const V5 = `
ALTER TABLE idempotency ADD COLUMN side_effect TEXT;
ALTER TABLE idempotency ADD COLUMN request TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS trace_by_call ON trace (call_id);
`;

/** Operators' display names, recorded beside their ids with each decision and each execution. */
const V6 = `
ALTER TABLE approvals ADD COLUMN decided_by_name TEXT;
ALTER TABLE trace ADD COLUMN actor_name TEXT;
`;

/** What the tenant's directory is owed, committed with the changes it reports (src/ledger/outbox.ts). */
const V7 = OUTBOX_SCHEMA;
/** The task a run was opened for: the orchestrator's key and the body it opened with. */
const V8 = `
CREATE TABLE IF NOT EXISTS task (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  task_key TEXT NOT NULL,
  request TEXT NOT NULL
);
`;

/**
 * The run's claims on its tenant's shared state (src/ledger/claim-store.ts), and what an approval
 * shows of other runs' effects on the same thing and of the value caps.
 */
const V9 = `${CLAIMS_SCHEMA}
ALTER TABLE approvals ADD COLUMN cross_run TEXT;
ALTER TABLE trace ADD COLUMN claim_ms INTEGER;
`;

/**
 * Approval escalation: when each approval's decision is due (its tool's SLA, else the tenant's),
 * and when it was announced overdue, so the announcement goes out once.
 */
const V10_ESCALATION = `
ALTER TABLE approvals ADD COLUMN sla_due_at INTEGER;
ALTER TABLE approvals ADD COLUMN escalated_at INTEGER;
`;

/** Who approves: an approval's roles, how many operators it needs and their approvals so far. */
const V11_APPROVER_ROLES = `
ALTER TABLE approvals ADD COLUMN approvers TEXT;
`;

/**
 * Tools per task: the subset a run was opened with (JSON refs, NULL for its whole namespace), the
 * tools added to it since, the namespaces it may reach, and which trace entries came through
 * `use_tool` (the entry names the real tool).
 */
const V12_TOOLS = `
ALTER TABLE run ADD COLUMN tools TEXT;
ALTER TABLE run ADD COLUMN added_tools TEXT NOT NULL DEFAULT '[]';
ALTER TABLE run ADD COLUMN reach TEXT;
ALTER TABLE trace ADD COLUMN via TEXT;
`;

/**
 * Approve with edit: the key an edited approval was asked under (a resend of it finds the edited
 * call), the edit itself, and the edit on the trace entry of the call it executed.
 */
const V13_APPROVAL_EDITS = `
ALTER TABLE approvals ADD COLUMN asked_key TEXT;
ALTER TABLE approvals ADD COLUMN edit TEXT;
CREATE INDEX IF NOT EXISTS approvals_by_asked_key ON approvals (asked_key);
ALTER TABLE trace ADD COLUMN edit TEXT;
`;

/** Polls: a trace entry that asked again about a pending approval, charged nothing. */
const V14_POLLS = `
ALTER TABLE trace ADD COLUMN poll INTEGER;
`;

/** Trace context: the caller's W3C traceparent of a call (JSON), the parent of the call's span. */
const V15_TRACE_CONTEXT = `
ALTER TABLE trace ADD COLUMN traceparent TEXT;
`;

/**
 * What the tenant's directory has been told of the run (its tools and subjects, JSON), so a ledger
 * that left memory does not tell it again on its next call.
 */
const V16_RUN_TOLD = `
ALTER TABLE run ADD COLUMN told TEXT;
`;

/**
 * Trace entries are completed by their call id only while open (a send under way, or one a restart
 * cut off): the index holds those few, not every call of the run. A call written whole (a read, a
 * replay, a refusal) adds nothing to it, and the alarm finds the open entries without a scan.
 */
const V17_OPEN_TRACE_BY_CALL = `
DROP INDEX IF EXISTS trace_by_call;
CREATE INDEX IF NOT EXISTS trace_open_by_call ON trace (call_id) WHERE ended_at IS NULL;
`;

/**
 * What an approval's call did (src/approvals/execution.ts): executed, refused by the upstream, not
 * sent, or in doubt; NULL while nothing is known, and for approvals settled before it was recorded
 * (read from their result then).
 */
const V18_APPROVAL_EXECUTION = `
ALTER TABLE approvals ADD COLUMN execution TEXT;
`;

/** Whom the run acts for: the user its opener's verified assertion named (JSON), NULL for none. */
const V19_RUN_USER = `
ALTER TABLE run ADD COLUMN acts_for TEXT;
`;

/** The agent profile a run was opened with (NULL for a tenant key's run), for its audit receipts. */
const V20_RUN_PROFILE = `
ALTER TABLE run ADD COLUMN profile TEXT;
`;

/**
 * Versions per tool (src/catalog/tool-version.ts): the version of each tool the run was shown or
 * called (JSON, `namespace.tool` → version and part digests; NULL for a run opened before, which
 * pins each tool at its next call), and what an approval is bound to beside its call: its tool's
 * version and the tenant's rules for that tool (JSON; NULL for one asked before, judged by its
 * `policy_version` alone).
 */
const V21_TOOL_VERSIONS = `
ALTER TABLE run ADD COLUMN tool_versions TEXT;
ALTER TABLE approvals ADD COLUMN policy_binding TEXT;
`;

export const LEDGER_MIGRATIONS: readonly string[] = [
  V1,
  V2,
  V3,
  V4,
  V5,
  V6,
  V7,
  V8,
  V9,
  V10_ESCALATION,
  V11_APPROVER_ROLES,
  V12_TOOLS,
  V13_APPROVAL_EDITS,
  V14_POLLS,
  V15_TRACE_CONTEXT,
  V16_RUN_TOLD,
  V17_OPEN_TRACE_BY_CALL,
  V18_APPROVAL_EXECUTION,
  V19_RUN_USER,
  V20_RUN_PROFILE,
  V21_TOOL_VERSIONS,
];

/**
 * The schema every migration above together produces, as one script: what a new run's ledger is
 * created with. Folded from the migrations (src/core/sql-squash.ts) on the first run created, so
 * a migration added above is all a change of schema takes; test/workerd/ledger-schema.test.ts
 * compares the script's schema with the migrations', column by column and index by index.
 */
const ledgerSchema = lazily(() => squashMigrations(LEDGER_MIGRATIONS));

/** Brings a woken ledger's schema up to date in one statement when current; false when it has none. */
export function migrateExistingLedger(sql: SqlStorage): boolean {
  return migrateExisting(sql, LEDGER_MIGRATIONS);
}

/** Creates a new run's schema in a database known to be empty (see `createSchema`). */
export function createLedger(sql: SqlStorage): void {
  createSchema(sql, LEDGER_MIGRATIONS, ledgerSchema());
}
