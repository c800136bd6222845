/** The one-row table recording which migration a database has reached. */
const VERSION_TABLE = "schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)";

/**
 * Ordered SQLite migrations for a Durable Object's storage. `migrations[n]` takes the schema from
 * version n to n + 1; the version reached is recorded in a one-row `schema_version` table, so an
 * object created by an older deploy applies only the steps it has not seen. Call it inside
 * `blockConcurrencyWhile`, before the object serves anything.
 *
 * @example
 * void ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage.sql, [V1, V2]));
 */
export function applyMigrations(sql: SqlStorage, migrations: readonly string[]): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS ${VERSION_TABLE}`);
  migrateExisting(sql, migrations);
}

function migrateFrom(sql: SqlStorage, migrations: readonly string[], current: number): void {
  for (let version = current; version < migrations.length; version++) {
    sql.exec(migrations[version] ?? "");
    sql.exec(
      "INSERT INTO schema_version (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
      version + 1,
    );
  }
}

/**
 * Creates the schema `migrations` end at in one script, in a database the caller knows is empty
 * (`migrateExisting` answered false): `current`, the tables and indexes every migration together
 * produces (`squashMigrations(migrations)`, sql-squash.ts, built once and kept), and the version
 * reached, so a new object pays one script instead of replaying its schema's history.
 */
export function createSchema(sql: SqlStorage, migrations: readonly string[], current: string): void {
  sql.exec(
    `${current}\nCREATE TABLE ${VERSION_TABLE};\nINSERT INTO schema_version (id, version) VALUES (1, ${migrations.length});`,
  );
}

/**
 * An existing database brought up to the schema `migrations` end at, asking in one statement both
 * whether it holds a schema and which version: what a woken object runs before anything else.
 * False, and nothing written, when it holds none (a fresh object).
 */
export function migrateExisting(sql: SqlStorage, migrations: readonly string[]): boolean {
  let current: number;
  try {
    current =
      sql.exec<{ version: number }>("SELECT version FROM schema_version WHERE id = 1").toArray()[0]
        ?.version ?? 0;
  } catch (error) {
    if (error instanceof Error && /no such table/i.test(error.message)) return false;
    throw error;
  }
  migrateFrom(sql, migrations, current);
  return true;
}
