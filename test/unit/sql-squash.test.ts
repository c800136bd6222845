import { describe, expect, it } from "vitest";
import { squashMigrations } from "../../src/core/sql-squash";

/**
 * The schema a list of migrations ends at, folded into one script (src/core/sql-squash.ts). That
 * SQLite builds the same schema from the script as from the migrations is checked against SQLite
 * itself, for the run ledger's migrations, in test/workerd/ledger-schema.test.ts.
 */

const oneLine = (script: string) => script.replace(/\s+/g, " ").trim();

describe("migrations folded into one script", () => {
  it("appends each added column to its table's definition, in the order the migrations add them", () => {
    const script = squashMigrations([
      "CREATE TABLE IF NOT EXISTS run (\n  id INTEGER PRIMARY KEY,\n  state TEXT NOT NULL\n);",
      "ALTER TABLE run ADD COLUMN ended_at INTEGER;\nALTER TABLE run ADD COLUMN tools TEXT NOT NULL DEFAULT '[]';",
      "ALTER TABLE run ADD told TEXT;",
    ]);
    expect(oneLine(script)).toBe(
      "CREATE TABLE IF NOT EXISTS run ( id INTEGER PRIMARY KEY, state TEXT NOT NULL, ended_at INTEGER, tools TEXT NOT NULL DEFAULT '[]', told TEXT );",
    );
  });

  it("puts an added column after the table's last column, before its constraints, as SQLite does", () => {
    const script = squashMigrations([
      "CREATE TABLE pages (handle TEXT, page INTEGER CHECK (page >= 0), PRIMARY KEY (handle, page), CHECK (handle != '') ) WITHOUT ROWID;",
      "ALTER TABLE pages ADD COLUMN seen_at INTEGER;",
    ]);
    expect(oneLine(script)).toBe(
      "CREATE TABLE pages (handle TEXT, page INTEGER CHECK (page >= 0), seen_at INTEGER, PRIMARY KEY (handle, page), CHECK (handle != '') ) WITHOUT ROWID;",
    );
  });

  it("creates every table before any index, and leaves out an index a later migration dropped", () => {
    const script = squashMigrations([
      "CREATE TABLE trace (seq INTEGER PRIMARY KEY, call_id TEXT);\nCREATE UNIQUE INDEX IF NOT EXISTS trace_by_call ON trace (call_id);",
      "CREATE TABLE task (id INTEGER PRIMARY KEY);",
      "DROP INDEX IF EXISTS trace_by_call;\nCREATE INDEX IF NOT EXISTS trace_open ON trace (call_id) WHERE seq > 0;",
    ]);
    expect(script.split(";\n").filter(Boolean).map(oneLine)).toEqual([
      "CREATE TABLE trace (seq INTEGER PRIMARY KEY, call_id TEXT )",
      "CREATE TABLE task (id INTEGER PRIMARY KEY )",
      "CREATE INDEX IF NOT EXISTS trace_open ON trace (call_id) WHERE seq > 0",
    ]);
  });

  it("takes a table or index created again under IF NOT EXISTS as the no-op SQLite makes it", () => {
    const first = "CREATE TABLE IF NOT EXISTS outbox (topic TEXT PRIMARY KEY);";
    expect(
      squashMigrations([
        first,
        first,
        "CREATE INDEX IF NOT EXISTS a ON outbox (topic);",
        "CREATE INDEX IF NOT EXISTS a ON outbox (topic);",
      ]),
    ).toBe(squashMigrations([first, "CREATE INDEX IF NOT EXISTS a ON outbox (topic);"]));
  });

  it("does not split a statement at a semicolon inside a quoted default", () => {
    const script = squashMigrations([
      "CREATE TABLE notes (id INTEGER PRIMARY KEY);",
      "ALTER TABLE notes ADD COLUMN body TEXT NOT NULL DEFAULT 'a;b ''c;''';",
    ]);
    expect(oneLine(script)).toBe(
      "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL DEFAULT 'a;b ''c;''' );",
    );
  });

  it("refuses a statement no script of tables and indexes could stand for", () => {
    const table = "CREATE TABLE run (id INTEGER PRIMARY KEY, state TEXT);";
    expect(() => squashMigrations([table, "UPDATE run SET state = 'open';"])).toThrow(/cannot fold/);
    expect(() => squashMigrations([table, "DROP TABLE run;"])).toThrow(/cannot fold/);
    expect(() => squashMigrations([table, "ALTER TABLE run RENAME COLUMN state TO status;"])).toThrow(
      /cannot fold/,
    );
  });

  it("refuses migrations that contradict themselves", () => {
    const table = "CREATE TABLE run (id INTEGER PRIMARY KEY);";
    expect(() => squashMigrations([table, table])).toThrow(/created twice/);
    expect(() => squashMigrations(["ALTER TABLE run ADD COLUMN state TEXT;"])).toThrow(
      /no migration created/,
    );
    expect(() => squashMigrations(["CREATE INDEX a ON run (id);"])).toThrow(/no migration created/);
    expect(() => squashMigrations([table, "DROP INDEX a;"])).toThrow(/never created/);
  });
});
