import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { applyMigrations } from "../../src/core/sql-migrations";
import { RunStore } from "../../src/ledger/run-store";
import { createLedger, LEDGER_MIGRATIONS, migrateExistingLedger } from "../../src/ledger/schema";

/**
 * A new run's ledger is created from one script (the migrations folded by src/core/sql-squash.ts), an
 * older one by its migrations: both must end at exactly the same schema, so every table, column,
 * constraint and index is compared.
 */

interface SchemaDump {
  version: number | null;
  objects: Record<string, unknown>;
}

/** Every table and index of the database (not the runtime's own), with its columns and definition. */
function dumpSchema(sql: SqlStorage): SchemaDump {
  const rows = sql
    .exec<{ type: string; name: string; tbl_name: string; sql: string | null }>(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY name",
    )
    .toArray();
  const objects: Record<string, unknown> = {};
  for (const row of rows) {
    const definition = row.sql === null ? null : row.sql.replace(/\s+/g, " ").replace(/\s*([(),])\s*/g, "$1");
    if (row.type === "table") {
      objects[`table ${row.name}`] = {
        definition,
        columns: sql.exec(`PRAGMA table_info("${row.name}")`).toArray(),
        indexes: sql
          .exec<{ name: string }>(`PRAGMA index_list("${row.name}")`)
          .toArray()
          .sort((a, b) => a.name.localeCompare(b.name))
          .map((index) => ({ ...index, columns: sql.exec(`PRAGMA index_xinfo("${index.name}")`).toArray() })),
      };
    } else {
      objects[`${row.type} ${row.name}`] = { table: row.tbl_name, definition };
    }
  }
  const version =
    sql.exec<{ version: number }>("SELECT version FROM schema_version WHERE id = 1").toArray()[0]?.version ??
    null;
  return { version, objects };
}

let ledgers = 0;

/** A fresh, empty run ledger's storage, set up by `build`, and its schema afterwards. */
function schemaBuiltBy(build: (sql: SqlStorage) => void): Promise<SchemaDump> {
  const stub = env.RUN_LEDGER.get(env.RUN_LEDGER.idFromName(`ledger-schema-${ledgers++}`));
  return runInDurableObject(stub, (_instance, state) => {
    build(state.storage.sql);
    return dumpSchema(state.storage.sql);
  });
}

describe("a run ledger's schema", () => {
  it("is created for a new run in one script, exactly as the migrations from the first version make it", async () => {
    const fresh = await schemaBuiltBy(createLedger);
    const stepByStep = await schemaBuiltBy((sql) => applyMigrations(sql, LEDGER_MIGRATIONS));
    expect(fresh.version).toBe(LEDGER_MIGRATIONS.length);
    expect(Object.keys(fresh.objects)).toContain("table run");
    expect(fresh).toEqual(stepByStep);
  });

  it("tells the script and the migrations apart when they differ", async () => {
    // What a fold that missed a migration's column or index would leave: the comparison sees it.
    const fresh = await schemaBuiltBy(createLedger);
    const withColumn = await schemaBuiltBy((sql) =>
      applyMigrations(sql, [...LEDGER_MIGRATIONS.slice(0, -1), "ALTER TABLE trace ADD COLUMN extra TEXT;"]),
    );
    expect(withColumn.version).toBe(fresh.version);
    expect(withColumn.objects["table trace"]).not.toEqual(fresh.objects["table trace"]);
    const withIndex = await schemaBuiltBy((sql) =>
      applyMigrations(sql, [
        ...LEDGER_MIGRATIONS,
        "CREATE INDEX IF NOT EXISTS trace_by_tool ON trace (tool);",
      ]),
    );
    expect(Object.keys(withIndex.objects)).toContain("index trace_by_tool");
    expect(withIndex.objects).not.toEqual(fresh.objects);
  });

  it("brings a ledger of every older version to the same schema through the migrations it has not seen", async () => {
    const fresh = await schemaBuiltBy(createLedger);
    for (let version = 1; version < LEDGER_MIGRATIONS.length; version++) {
      const migrated = await schemaBuiltBy((sql) => {
        applyMigrations(sql, LEDGER_MIGRATIONS.slice(0, version));
        expect(migrateExistingLedger(sql)).toBe(true);
      });
      expect(migrated, `from version ${version}`).toEqual(fresh);
    }
  });

  it("keeps an older ledger's run through its migrations, the new columns at their defaults", async () => {
    const stub = env.RUN_LEDGER.get(env.RUN_LEDGER.idFromName(`ledger-schema-${ledgers++}`));
    const run = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      applyMigrations(sql, LEDGER_MIGRATIONS.slice(0, 1));
      sql.exec(
        `INSERT INTO run (id, tenant, run_id, namespace, environment, catalog_version, limits, repeat_threshold,
           state, created_at, deadline_at) VALUES (1, 'acme', 'run_old', 'support', 'sandbox', 'v1', ?, 3, 'open', 1, 2)`,
        JSON.stringify({ max_calls: 5, max_writes: 1, max_destructive: 0, deadline_s: 60 }),
      );
      migrateExistingLedger(sql);
      return new RunStore(sql).readRun();
    });
    expect(run).toMatchObject({
      run_id: "run_old",
      state: "open",
      counters: { calls_used: 0, writes_used: 0, destructive_used: 0 },
      tainted_by: null,
      added_tools: [],
    });
  });
});
