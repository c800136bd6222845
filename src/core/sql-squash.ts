/**
 * The schema a list of SQLite migrations ends at, as one script: what a new object is created with
 * (`createSchema` in sql-migrations.ts), so the migrations stay the one place its tables are
 * declared. It folds the statements migrations write (creating tables and indexes, adding columns,
 * dropping indexes) as SQLite applies them: an added column follows its table's last column, before
 * the table's constraints (a composite primary key, a CHECK). Any other statement (an UPDATE, a dropped table, a renamed
 * column) is refused with an error, since the script could not say what it did; a schema that needs
 * one is created by replaying its migrations instead.
 *
 * @example
 * squashMigrations(["CREATE TABLE t (a TEXT);", "ALTER TABLE t ADD COLUMN b INTEGER;"]);
 * // "CREATE TABLE t (a TEXT,\n  b INTEGER\n);\n"
 */

interface Table {
  /** `CREATE TABLE … (`, as written. */
  head: string;
  /** Everything between the parentheses: columns, then table constraints. */
  body: string;
  /** What follows the closing parenthesis (`WITHOUT ROWID`, `STRICT`), if anything. */
  tail: string;
}

const CREATE_TABLE = /^(CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?(\w+)\s*\()([\s\S]*)\)([^)]*)$/i;
const ADD_COLUMN = /^ALTER\s+TABLE\s+(\w+)\s+ADD\s+(?:COLUMN\s+)?([\s\S]+)$/i;
const CREATE_INDEX = /^CREATE\s+(?:UNIQUE\s+)?INDEX\s+(IF\s+NOT\s+EXISTS\s+)?(\w+)\s+ON\s+(\w+)/i;
const DROP_INDEX = /^DROP\s+INDEX\s+(IF\s+EXISTS\s+)?(\w+)$/i;

export function squashMigrations(migrations: readonly string[]): string {
  const tables = new Map<string, Table>();
  const indexes = new Map<string, { table: string; statement: string }>();
  for (const statement of migrations.flatMap(statementsOf)) {
    const created = CREATE_TABLE.exec(statement);
    if (created) {
      const [, head = "", ifNotExists, name = "", body = "", tail = ""] = created;
      if (tables.has(name) && ifNotExists) continue;
      if (tables.has(name)) throw new Error(`squashMigrations: table ${name} is created twice`);
      tables.set(name, { head, body: body.replace(/\s+$/, ""), tail });
      continue;
    }
    const added = ADD_COLUMN.exec(statement);
    if (added) {
      const [, name = "", column = ""] = added;
      const table = tables.get(name);
      if (!table) throw new Error(`squashMigrations: column added to ${name}, which no migration created`);
      const at = constraintsAt(table.body);
      table.body = `${table.body.slice(0, at).replace(/\s+$/, "")},\n  ${column}${table.body.slice(at)}`;
      continue;
    }
    const index = CREATE_INDEX.exec(statement);
    if (index) {
      const [, ifNotExists, name = "", table = ""] = index;
      if (indexes.has(name) && ifNotExists) continue;
      if (indexes.has(name)) throw new Error(`squashMigrations: index ${name} is created twice`);
      if (!tables.has(table))
        throw new Error(`squashMigrations: index ${name} on ${table}, which no migration created`);
      indexes.set(name, { table, statement });
      continue;
    }
    const dropped = DROP_INDEX.exec(statement);
    if (dropped) {
      const [, ifExists, name = ""] = dropped;
      if (!indexes.delete(name) && !ifExists)
        throw new Error(`squashMigrations: index ${name} is dropped, never created`);
      continue;
    }
    throw new Error(`squashMigrations: cannot fold this statement into a schema: ${statement}`);
  }
  const created = [...tables.values()].map(({ head, body, tail }) => `${head}${body}\n)${tail};\n`);
  return [...created, ...[...indexes.values()].map(({ statement }) => `${statement};\n`)].join("");
}

const TABLE_CONSTRAINT = /^(CONSTRAINT|PRIMARY\s+KEY|UNIQUE|CHECK|FOREIGN\s+KEY)\b/i;

/**
 * Where a table definition's constraints begin (the comma before the first), or its end when it has
 * none: where SQLite puts a column added to it.
 */
function constraintsAt(body: string): number {
  let depth = 0;
  let quote: string | null = null;
  for (let at = 0; at < body.length; at++) {
    const char = body[at];
    if (quote !== null) {
      if (char === quote) quote = null;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === "(") {
      depth++;
    } else if (char === ")") {
      depth--;
    } else if (char === "," && depth === 0 && TABLE_CONSTRAINT.test(body.slice(at + 1).trimStart())) {
      return at;
    }
  }
  return body.length;
}

/** A script's statements, split at each `;` outside a quoted string, trimmed, the empty ones left out. */
function statementsOf(script: string): string[] {
  const statements: string[] = [];
  let quote: string | null = null;
  let start = 0;
  for (let at = 0; at < script.length; at++) {
    const char = script[at];
    if (quote !== null) {
      if (char === quote) quote = null;
    } else if (char === "'" || char === '"') {
      quote = char;
    } else if (char === ";") {
      statements.push(script.slice(start, at));
      start = at + 1;
    }
  }
  statements.push(script.slice(start));
  return statements.map((statement) => statement.trim()).filter((statement) => statement !== "");
}
