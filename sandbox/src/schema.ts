import { HELPDESK_RESETTABLE, HELPDESK_TABLES, seedHelpdesk } from "./helpdesk/tables";
import { SEED_ORDERS, SEED_POLICIES } from "./seed";
import { SEED_CUSTOMERS } from "./seed-customers";
import { SEED_MESSAGES } from "./seed-messages";
import { SEED_SHIPMENTS } from "./seed-shipments";
import { insertSeedShipment, SHIPMENTS_TABLE } from "./shipments";

/**
 * SQLite schema of the store. One database holds every tenant; each tenant-owned row carries a
 * `tenant` column and every business query filters on it, which is the whole isolation story.
 */

const TABLES = [
  `CREATE TABLE IF NOT EXISTS customers (
    customer_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, name TEXT NOT NULL, email TEXT NOT NULL,
    phone TEXT NOT NULL, tier TEXT NOT NULL, line1 TEXT NOT NULL, city TEXT NOT NULL,
    postal_code TEXT NOT NULL, country TEXT NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, risk_score REAL NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS customer_messages (
    message_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, customer_id TEXT NOT NULL,
    channel TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, received_at TEXT NOT NULL)`,
  "CREATE INDEX IF NOT EXISTS messages_by_customer ON customer_messages (tenant, customer_id, received_at)",
  `CREATE TABLE IF NOT EXISTS orders (
    order_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, customer_id TEXT NOT NULL, status TEXT NOT NULL,
    currency TEXT NOT NULL, total_cents INTEGER NOT NULL, placed_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, version INTEGER NOT NULL, items TEXT NOT NULL,
    internal_notes TEXT NOT NULL, warehouse_id TEXT NOT NULL)`,
  // Whose an order is, where the tenant's upstream authorizes per user: only that user's credential
  // (its act claim) may refund it. Orders with no row here are anyone's of the tenant.
  `CREATE TABLE IF NOT EXISTS order_owners (
    tenant TEXT NOT NULL, order_id TEXT NOT NULL, owner TEXT NOT NULL, PRIMARY KEY (tenant, order_id))`,
  `CREATE TABLE IF NOT EXISTS refunds (
    refund_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL,
    amount_cents INTEGER NOT NULL, reason TEXT NOT NULL, status TEXT NOT NULL,
    created_at TEXT NOT NULL, run_id TEXT, tool TEXT)`,
  "CREATE INDEX IF NOT EXISTS refunds_by_order ON refunds (tenant, order_id)",
  `CREATE TABLE IF NOT EXISTS tickets (
    ticket_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, customer_id TEXT NOT NULL,
    priority TEXT NOT NULL, summary TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL,
    run_id TEXT, tool TEXT)`,
  `CREATE TABLE IF NOT EXISTS emails (
    email_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, customer_id TEXT NOT NULL,
    to_address TEXT NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL, status TEXT NOT NULL,
    queued_at TEXT NOT NULL, run_id TEXT, tool TEXT, draft_id TEXT, draft_version INTEGER)`,
  `CREATE TABLE IF NOT EXISTS email_drafts (
    draft_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, customer_id TEXT NOT NULL, template TEXT NOT NULL,
    subject TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL, version INTEGER NOT NULL,
    run_id TEXT, tool TEXT)`,
  SHIPMENTS_TABLE,
  `CREATE TABLE IF NOT EXISTS policies (
    policy_id TEXT PRIMARY KEY, title TEXT NOT NULL, summary TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS faults (
    fault_id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, path_prefix TEXT, mode TEXT NOT NULL,
    remaining INTEGER NOT NULL, hang_ms INTEGER, retry_after_s INTEGER, created_at TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS requests (
    seq INTEGER PRIMARY KEY, at TEXT NOT NULL, tenant TEXT, run_id TEXT, tool TEXT,
    method TEXT NOT NULL, path TEXT NOT NULL, idempotency_key TEXT, fault TEXT, status INTEGER,
    phase TEXT NOT NULL, traceparent TEXT)`,
  "CREATE INDEX IF NOT EXISTS requests_by_run ON requests (run_id, seq)",
  `CREATE TABLE IF NOT EXISTS idempotency (
    tenant TEXT NOT NULL, key TEXT NOT NULL, request_hash TEXT NOT NULL, status INTEGER,
    body TEXT, locked_until INTEGER, created_at TEXT NOT NULL, PRIMARY KEY (tenant, key))`,
  "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  "CREATE TABLE IF NOT EXISTS notifications (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, body TEXT NOT NULL)",
  // The webhook-id of each verified delivery: a second delivery of an id is acknowledged and counted, not recorded.
  `CREATE TABLE IF NOT EXISTS webhook_deliveries (
    webhook_id TEXT PRIMARY KEY, notification_seq INTEGER NOT NULL, webhook_timestamp INTEGER NOT NULL,
    redeliveries INTEGER NOT NULL DEFAULT 0)`,
  // Armed receiver failures (POST /_admin/notifications/failures): the next deliveries answer 503.
  `CREATE TABLE IF NOT EXISTS webhook_failures (
    seq INTEGER PRIMARY KEY, webhook_id TEXT, remaining INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS webhook_rejections (
    seq INTEGER PRIMARY KEY, at TEXT NOT NULL, webhook_id TEXT, status INTEGER NOT NULL, code TEXT NOT NULL,
    message TEXT NOT NULL)`,
  // A note the customer left on an order (set through the admin API, as a customer would in the shop).
  `CREATE TABLE IF NOT EXISTS order_notes (
    tenant TEXT NOT NULL, order_id TEXT NOT NULL, note TEXT NOT NULL, PRIMARY KEY (tenant, order_id))`,
  `CREATE TABLE IF NOT EXISTS credentials (
    run_id TEXT NOT NULL, tool TEXT NOT NULL, tenant TEXT NOT NULL, credential TEXT NOT NULL,
    presented_at TEXT NOT NULL, PRIMARY KEY (run_id, tool))`,
  ...HELPDESK_TABLES,
];

const RESETTABLE = [
  "customers",
  "customer_messages",
  "orders",
  "order_owners",
  "order_notes",
  "refunds",
  "tickets",
  "emails",
  "email_drafts",
  "shipments",
  "policies",
  "faults",
  "requests",
  "idempotency",
  "notifications",
  "webhook_deliveries",
  "webhook_rejections",
  "webhook_failures",
  "credentials",
  ...HELPDESK_RESETTABLE,
];

export function createSchema(sql: SqlStorage): void {
  for (const statement of TABLES) sql.exec(statement);
  // A store created before emails were sent from drafts lacks these columns: add them in place.
  const columns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(emails)")
      .toArray()
      .map((column) => column.name),
  );
  if (!columns.has("draft_id")) sql.exec("ALTER TABLE emails ADD COLUMN draft_id TEXT");
  if (!columns.has("draft_version")) sql.exec("ALTER TABLE emails ADD COLUMN draft_version INTEGER");
  // Likewise a store created before repeated webhook deliveries were counted.
  const deliveryColumns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(webhook_deliveries)")
      .toArray()
      .map((column) => column.name),
  );
  if (!deliveryColumns.has("redeliveries"))
    sql.exec("ALTER TABLE webhook_deliveries ADD COLUMN redeliveries INTEGER NOT NULL DEFAULT 0");
  // Likewise a store created before the request log kept the trace context.
  const requestColumns = new Set(
    sql
      .exec<{ name: string }>("PRAGMA table_info(requests)")
      .toArray()
      .map((column) => column.name),
  );
  if (!requestColumns.has("traceparent")) sql.exec("ALTER TABLE requests ADD COLUMN traceparent TEXT");
}

/**
 * Raised whenever the seed gains data an older store lacks (v2: customer messages, v3: shipments, v4: the helpdesk, v5: hooli's fleet orders, v6: the evaluation's own orders and customers, v7: wayne's orders, v8: the owners of some of them). A store seeded
 * by an older version is reseeded on start: sandbox state is disposable, a half-seeded one is not.
 */
const SEED_VERSION = "8";

export function isSeeded(sql: SqlStorage): boolean {
  const row = sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'seed_version'").toArray()[0];
  return row?.value === SEED_VERSION;
}

/** Wipes everything (log, faults and idempotency records included) and loads the seed again. */
export function resetToSeed(sql: SqlStorage): void {
  for (const table of RESETTABLE) sql.exec(`DELETE FROM ${table}`);
  for (const c of SEED_CUSTOMERS) {
    sql.exec(
      `INSERT INTO customers (customer_id, tenant, name, email, phone, tier, line1, city, postal_code,
        country, created_at, updated_at, risk_score) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      c.customer_id,
      c.tenant,
      c.name,
      c.email,
      c.phone,
      c.tier,
      c.address.line1,
      c.address.city,
      c.address.postal_code,
      c.address.country,
      c.created_at,
      c.updated_at,
      c.risk_score,
    );
  }
  const tenantOf = new Map(SEED_CUSTOMERS.map((c) => [c.customer_id, c.tenant]));
  for (const m of SEED_MESSAGES) {
    const tenant = tenantOf.get(m.customer_id);
    if (tenant === undefined) throw new Error(`seed message ${m.message_id} names no seeded customer`);
    sql.exec(
      `INSERT INTO customer_messages (message_id, tenant, customer_id, channel, subject, body, received_at)
        VALUES (?, ?, ?, ?, ?, ?, ?)`,
      m.message_id,
      tenant,
      m.customer_id,
      m.channel,
      m.subject,
      m.body,
      m.received_at,
    );
  }
  for (const o of SEED_ORDERS) {
    const total = o.items.reduce((sum, i) => sum + i.quantity * i.unit_price_cents, 0);
    sql.exec(
      `INSERT INTO orders (order_id, tenant, customer_id, status, currency, total_cents, placed_at,
        updated_at, version, items, internal_notes, warehouse_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      o.order_id,
      o.tenant,
      o.customer_id,
      o.status,
      o.currency,
      total,
      o.placed_at,
      o.updated_at,
      o.version,
      JSON.stringify(o.items),
      o.internal_notes,
      o.warehouse_id,
    );
    if (o.owner) {
      sql.exec(
        "INSERT INTO order_owners (tenant, order_id, owner) VALUES (?, ?, ?)",
        o.tenant,
        o.order_id,
        o.owner,
      );
    }
    for (const r of o.refunds) {
      sql.exec(
        `INSERT INTO refunds (refund_id, tenant, order_id, amount_cents, reason, status, created_at)
          VALUES (?, ?, ?, ?, ?, 'succeeded', ?)`,
        r.refund_id,
        o.tenant,
        o.order_id,
        r.amount_cents,
        r.reason,
        r.created_at,
      );
    }
  }
  for (const shipment of SEED_SHIPMENTS) insertSeedShipment(sql, shipment);
  seedHelpdesk(sql);
  for (const p of SEED_POLICIES) {
    sql.exec(
      "INSERT INTO policies (policy_id, title, summary) VALUES (?, ?, ?)",
      p.policy_id,
      p.title,
      p.summary,
    );
  }
  sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('seeded', ?)", new Date().toISOString());
  sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('seed_version', ?)", SEED_VERSION);
}
