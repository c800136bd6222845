import { env } from "cloudflare:workers";
import { isJSONRPCRequest, specTypeSchemas } from "@modelcontextprotocol/server";
import fc from "fast-check";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/http/app-env";
import type { CallRequest } from "../../src/machine/prepare";
import { holdsPrototypeKey } from "../../src/mcp/message";
import { answerPlainCall, plainCall } from "../../src/mcp/plain-call";
import { serve } from "../../src/mcp/sdk-transport";
import { type Envelope, failure, success } from "../../src/wire/envelope";
import { propertyPlans } from "../property-plan";

/**
 * A session's plain `tools/call` is answered without the MCP SDK's server and transport
 * (src/mcp/plain-call.ts), by a copy of their checks. This holds the copy to the SDK it copies: every
 * message the copy takes must pass the SDK's own JSON-RPC and `tools/call` schemas, and must get,
 * byte for byte, the answer the SDK's server gives it (the route's `serve`, with the same call
 * behind it). A release of the SDK that checks or answers differently fails here.
 */

const plan = propertyPlans(env);

const CLAIMS = { tenant: "acme", run: "run_contract", ns: "support" };

const GOOD_HEADERS = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": "2025-06-18",
};

/** The call behind both paths: deterministic, and its answer shows what it was handed. */
async function callTool(request: CallRequest): Promise<Envelope> {
  if (request.tool === "throws_error") throw new Error("the run's ledger is unreachable");
  if (request.tool === "throws_rpc_error") {
    throw Object.assign(new Error("Invalid params: refused"), { code: -32602, data: { field: "args" } });
  }
  const ctx = { call_id: "call_contract", environment: "sandbox" as const, tool: request.tool };
  if (request.ok) return success(ctx, { args: request.args });
  return failure(ctx, { code: "validation_error", message: "Refused.", problems: request.problems });
}

const app = new Hono<AppEnv>();
app.post("/sdk", async (c) =>
  serve(c, CLAIMS, await c.req.json(), { callTool: (_caller, request) => callTool(request) }),
);
app.post("/plain", async (c) => {
  const call = plainCall(c.req.raw, await c.req.json());
  return call === null ? c.body(null, 204) : answerPlainCall(call, callTool);
});

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

async function answerOf(path: "/sdk" | "/plain", headers: Record<string, string>, body: unknown) {
  const response = await app.request(path, { method: "POST", headers, body: JSON.stringify(body) }, env);
  const answer: Answer = {
    status: response.status,
    headers: [...response.headers.entries()].sort(([a], [b]) => a.localeCompare(b)),
    body: await response.text(),
  };
  return answer;
}

/** Whether the SDK's own schemas take `body` as a JSON-RPC request and a `tools/call` request. */
function sdkSchemasAccept(body: unknown): boolean {
  const checked = specTypeSchemas.CallToolRequest["~standard"].validate(body);
  if (checked instanceof Promise) throw new Error("the SDK's CallToolRequest schema is not synchronous");
  return isJSONRPCRequest(body) && checked.issues === undefined;
}

/**
 * "taken" when the copy answered `body` itself, and then with the SDK's answer; "left" when it
 * left `body` to the SDK (which serves whatever the copy does not take).
 */
async function compare(headers: Record<string, string>, body: unknown): Promise<"taken" | "left"> {
  const plain = await answerOf("/plain", headers, body);
  if (plain.status === 204) return "left";
  expect(sdkSchemasAccept(body), JSON.stringify(body)).toBe(true);
  expect(plain, JSON.stringify({ headers, body })).toEqual(await answerOf("/sdk", headers, body));
  return "taken";
}

const call = (params: unknown, id: unknown = 7) => ({ jsonrpc: "2.0", id, method: "tools/call", params });
const LOOKUP = { name: "lookup_order", arguments: { order_id: "A1002" } };

describe("a session's plain tools/call, answered without the SDK's server", () => {
  it("takes only calls the SDK's schemas accept, and answers them exactly as the SDK's server does", async () => {
    const taken: unknown[] = [];
    const left: unknown[] = [];
    const bodies = [
      call(LOOKUP),
      call(LOOKUP, "call-7"),
      call(LOOKUP, 0),
      call(LOOKUP, -3),
      call(LOOKUP, ""),
      call(LOOKUP, 2 ** 53),
      call(LOOKUP, 1.5),
      call(LOOKUP, null),
      call({ name: "lookup_order" }),
      call({ name: "lookup_order", arguments: {} }),
      call({ name: "lookup_order", arguments: { nested: { deep: [1, "two", null] } } }),
      call({ name: "" }),
      call({ name: "no_such_tool", arguments: { x: 1 } }),
      call({ name: "throws_error" }),
      call({ name: "throws_rpc_error", arguments: {} }),
      call({ name: "lookup_order", arguments: null }),
      call({ name: "lookup_order", arguments: [] }),
      call({ name: "lookup_order", arguments: "A1002" }),
      call({ name: 5 }),
      call({ arguments: {} }),
      call(null),
      call([LOOKUP]),
      call("lookup_order"),
      call({ ...LOOKUP, _meta: {} }),
      call({ ...LOOKUP, _meta: { progressToken: 1 } }),
      call({ ...LOOKUP, task: { ttl: 1000 } }),
      call({ ...LOOKUP, extra: true }),
      { jsonrpc: "2.0", method: "tools/call", params: LOOKUP },
      { jsonrpc: "1.0", id: 7, method: "tools/call", params: LOOKUP },
      { id: 7, method: "tools/call", params: LOOKUP },
      { jsonrpc: "2.0", id: 7, method: "tools/list", params: LOOKUP },
      { jsonrpc: "2.0", id: 7, method: "tools/call" },
      { ...call(LOOKUP), extra: 1 },
      [call(LOOKUP)],
    ];
    for (const body of bodies) ((await compare(GOOD_HEADERS, body)) === "taken" ? taken : left).push(body);
    const headerSets = [
      { ...GOOD_HEADERS, accept: "application/json" },
      { ...GOOD_HEADERS, accept: "text/event-stream" },
      { ...GOOD_HEADERS, accept: "*/*" },
      { ...GOOD_HEADERS, accept: "text/event-stream, application/json;q=0.9" },
      { ...GOOD_HEADERS, "content-type": "application/json; charset=utf-8" },
      { ...GOOD_HEADERS, "content-type": "text/plain" },
      { accept: GOOD_HEADERS.accept, "content-type": GOOD_HEADERS["content-type"] },
      { ...GOOD_HEADERS, "mcp-protocol-version": "2025-03-26" },
      { ...GOOD_HEADERS, "mcp-protocol-version": "2024-11-05" },
      { ...GOOD_HEADERS, "mcp-protocol-version": "1999-01-01" },
    ];
    for (const headers of headerSets) {
      ((await compare(headers, call(LOOKUP))) === "taken" ? taken : left).push(headers);
    }
    // Both sides of the copy's line are exercised: plain calls it answers, the rest it leaves.
    expect(taken.length).toBeGreaterThanOrEqual(15);
    expect(left.length).toBeGreaterThanOrEqual(20);
    expect(taken).toContainEqual(call(LOOKUP));
  });

  it("answers any message it takes as the SDK's server does, over generated messages", async () => {
    const json = fc.jsonValue({ maxDepth: 2 });
    const often = <T>(value: fc.Arbitrary<T>) =>
      fc.oneof({ weight: 4, arbitrary: value }, { weight: 1, arbitrary: json });
    // A field the plain form has no place for, now and then.
    const sometimes = <T>(fields: fc.Arbitrary<T>) =>
      fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fields });
    const args = fc.dictionary(fc.string({ maxLength: 6 }), json, { maxKeys: 3 });
    const params = fc
      .tuple(
        fc.record(
          { name: often(fc.string({ maxLength: 12 })), arguments: often(args) },
          { requiredKeys: ["name"] },
        ),
        sometimes(fc.record({ _meta: args })),
        sometimes(fc.record({ task: json })),
      )
      .map(([plain, meta, task]) => ({ ...plain, ...meta, ...task }));
    const message = fc
      .tuple(
        fc.record({
          jsonrpc: often(fc.constant("2.0")),
          id: often(fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.double())),
          method: often(fc.constant("tools/call")),
          params: often(params),
        }),
        sometimes(fc.record({ extra: json })),
      )
      .map(([plain, extra]) => ({ ...plain, ...extra }));
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(message, async (generated) => {
        // The route reads JSON text, and refuses a `__proto__` field before any of this.
        const body: unknown = JSON.parse(JSON.stringify(generated));
        if (holdsPrototypeKey(body)) return;
        if ((await compare(GOOD_HEADERS, body)) === "taken") taken++;
      }),
      plan({ seed: 2_026_092_801, numRuns: 150 }),
    );
    expect(taken).toBeGreaterThan(10);
  });
});
