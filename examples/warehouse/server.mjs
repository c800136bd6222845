// The example warehouse API of "Put your own API behind the proxy" (docs/own-api.md): the stock levels
// of a few SKUs, on http://127.0.0.1:8795/v1 (PORT to change it), for an X-Api-Key header equal to
// WAREHOUSE_API_KEY (default warehouse-demo-key). It stands in for your own API, so it is plain
// Node with no dependency: what the proxy adds is visible at the edge of a system it does not own.
import { createServer } from "node:http";

const port = Number(process.env.PORT ?? 8795);
const apiKey = process.env.WAREHOUSE_API_KEY ?? "warehouse-demo-key";

const STOCK = new Map(
  [
    { sku: "W-1001", name: "Stoneware mug, blue", on_hand: 42, reserved: 5, location: "A3-12" },
    { sku: "W-1002", name: "Linen tea towel", on_hand: 7, reserved: 7, location: "B1-04" },
    { sku: "W-1003", name: "Cast-iron teapot", on_hand: 0, reserved: 0, location: "C2-09" },
  ].map((item) => [
    item.sku,
    { ...item, available: item.on_hand - item.reserved, updated_at: "2026-11-30T08:00:00Z" },
  ]),
);

/** Every request this server answered, newest last: what reached it, for a test to read. */
const seen = [];

function send(response, status, body) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", `http://127.0.0.1:${port}`);
  if (url.pathname === "/_seen") return send(response, 200, seen);
  seen.push({ method: request.method, path: url.pathname, api_key: request.headers["x-api-key"] === apiKey });
  if (request.headers["x-api-key"] !== apiKey) {
    return send(response, 401, { error: "unauthorized", message: "X-Api-Key is missing or wrong" });
  }
  const match = /^\/v1\/skus\/([^/]+)\/stock$/.exec(url.pathname);
  if (request.method !== "GET" || !match) return send(response, 404, { error: "not_found" });
  const item = STOCK.get(decodeURIComponent(match[1]));
  if (!item) return send(response, 404, { error: "not_found", message: `no SKU ${match[1]}` });
  return send(response, 200, item);
});

server.listen(port, "127.0.0.1", () => {
  console.log(`warehouse API on http://127.0.0.1:${port}/v1 (X-Api-Key: the value of WAREHOUSE_API_KEY)`);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
