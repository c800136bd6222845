import { nowIso } from "./ids";
import {
  type AdminShipment,
  type Destination,
  failure,
  type Outcome,
  type RerouteAnswer,
  type Shipment,
  type ShipmentEvent,
  type ShipmentStatus,
} from "./model";
import type { SeedShipment } from "./seed-shipments";
import type { Caller } from "./store";

/**
 * The shipments API's data: one shipment per order, scoped to the caller's tenant like every
 * business query. Destination and events are JSON columns: the API only ever reads or replaces
 * them whole.
 */

export type ShipmentRow = {
  shipment_id: string;
  tenant: string;
  order_id: string;
  carrier: string;
  status: string;
  destination: string;
  events: string;
  version: number;
  run_id: string | null;
  tool: string | null;
};

export const SHIPMENTS_TABLE = `CREATE TABLE IF NOT EXISTS shipments (
    shipment_id TEXT PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL, carrier TEXT NOT NULL,
    status TEXT NOT NULL, destination TEXT NOT NULL, events TEXT NOT NULL, version INTEGER NOT NULL,
    run_id TEXT, tool TEXT, UNIQUE (tenant, order_id))`;

// The casts are safe because only this worker writes these columns, from validated values.
function toShipment(row: ShipmentRow): Shipment {
  return {
    shipment_id: row.shipment_id,
    order_id: row.order_id,
    carrier: row.carrier,
    status: row.status as ShipmentStatus,
    destination: JSON.parse(row.destination) as Destination,
    events: JSON.parse(row.events) as ShipmentEvent[],
    version: row.version,
  };
}

export function insertSeedShipment(sql: SqlStorage, s: SeedShipment): void {
  sql.exec(
    `INSERT INTO shipments (shipment_id, tenant, order_id, carrier, status, destination, events, version)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    s.shipment_id,
    s.tenant,
    s.order_id,
    s.carrier,
    s.status,
    JSON.stringify(s.destination),
    JSON.stringify(s.events),
    s.version,
  );
}

export function readShipment(sql: SqlStorage, tenant: string, orderId: string): Shipment | null {
  const row = sql
    .exec<ShipmentRow>("SELECT * FROM shipments WHERE tenant = ? AND order_id = ?", tenant, orderId)
    .toArray()[0];
  return row ? toShipment(row) : null;
}

export function listShipments(sql: SqlStorage, tenant: string | null): AdminShipment[] {
  return sql
    .exec<ShipmentRow>("SELECT * FROM shipments WHERE ?1 IS NULL OR tenant = ?1 ORDER BY order_id", tenant)
    .toArray()
    .map((row) => ({ ...toShipment(row), tenant: row.tenant, run_id: row.run_id, tool: row.tool }));
}

/**
 * Sends a shipment somewhere else, as a carrier's "change delivery" does: refused once delivered
 * (409), and only within the country it was going to, because carriers do not re-export a parcel
 * mid-journey (422). The reroute is itself a tracking event, so the history shows it.
 */
export function rerouteShipment(
  sql: SqlStorage,
  caller: Caller,
  orderId: string,
  input: { destination: Destination; reason: string },
): Outcome<RerouteAnswer> {
  const shipment = readShipment(sql, caller.tenant, orderId);
  if (!shipment) return failure(404, "not_found", `No shipment for order '${orderId}'.`);
  if (shipment.status === "delivered") {
    return failure(
      409,
      "shipment_delivered",
      `Shipment ${shipment.shipment_id} was already delivered and can no longer be rerouted.`,
    );
  }
  if (input.destination.country !== shipment.destination.country) {
    return failure(
      422,
      "destination_not_serviceable",
      `A reroute must stay in ${shipment.destination.country}; ${shipment.carrier} cannot send shipment ${shipment.shipment_id} to ${input.destination.country}.`,
    );
  }
  const last = shipment.events.at(-1);
  const rerouted: ShipmentEvent = {
    at: nowIso(),
    status: "rerouted",
    location: last?.location ?? "",
    note: `Rerouted to ${input.destination.city} at the shipper's request: ${input.reason}`,
  };
  const row = sql
    .exec<ShipmentRow>(
      `UPDATE shipments SET status = 'rerouted', destination = ?, events = ?, version = version + 1,
        run_id = ?, tool = ? WHERE tenant = ? AND order_id = ? RETURNING *`,
      JSON.stringify(input.destination),
      JSON.stringify([...shipment.events, rerouted]),
      caller.run_id,
      caller.tool,
      caller.tenant,
      orderId,
    )
    .one();
  const { shipment_id, order_id, status, destination, version } = toShipment(row);
  return { status: 200, body: { shipment_id, order_id, status, destination, version } };
}
