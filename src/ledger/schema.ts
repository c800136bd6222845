/**
 * The RunLedger's SQLite schema. One database per run; every statement is idempotent so the
 * constructor can run it on each wake-up inside blockConcurrencyWhile.
 */
export const LEDGER_SCHEMA = `
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
