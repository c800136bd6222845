import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ProxyClient } from "../../agents/client";
import { OpenAiCompatibleAgent, wireApiFromEnv } from "../../agents/openai-compatible";
import type { WireApi } from "../../agents/openai-wire";
import { specsFor } from "../../src/specs/formats";
import { catalog } from "../../src/tools";
import { type Envelope, type FailureSpec, failure, success } from "../../src/wire/envelope";

/**
 * The OpenAI-compatible agent on the wire, against one scripted local server (loopback, a port the
 * operating system hands out) that plays both sides: the model endpoint, speaking Chat Completions
 * or Responses as scripted turn by turn, and the proxy, serving the catalog's real tool specs and
 * scripted envelopes. Nothing leaves the machine.
 */

interface Seen {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
  at: number;
}

/** A model turn, said once for both formats. */
type Turn =
  | { calls: Array<{ id: string; name: string; arguments: string }> }
  | { text: string }
  | { refusal: string };

const RUN = "run_wire";

function chatReply(turn: Turn): unknown {
  if ("refusal" in turn) {
    return { choices: [{ message: { role: "assistant", content: null, refusal: turn.refusal } }] };
  }
  if ("text" in turn) return { choices: [{ message: { role: "assistant", content: turn.text } }] };
  return {
    choices: [
      {
        message: {
          role: "assistant",
          content: null,
          tool_calls: turn.calls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: call.arguments },
          })),
        },
      },
    ],
  };
}

function responsesReply(turn: Turn): unknown {
  if ("refusal" in turn) {
    return {
      output: [{ type: "message", role: "assistant", content: [{ type: "refusal", refusal: turn.refusal }] }],
    };
  }
  if ("text" in turn) {
    return {
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: turn.text }] }],
    };
  }
  return {
    output: [
      { type: "reasoning", id: "rs_1", summary: [] },
      ...turn.calls.map((call) => ({
        type: "function_call",
        id: `fc_${call.id}`,
        call_id: call.id,
        name: call.name,
        arguments: call.arguments,
      })),
    ],
  };
}

/** The proxy's answers, by tool and canonical arguments, each list answered in turn. */
type Script = Map<string, Array<(ctx: { call_id: string; tool: string }) => Envelope>>;

const ok = (data: unknown) => (ctx: { call_id: string; tool: string }) =>
  success({ ...ctx, environment: "sandbox" }, data);
const fail = (spec: FailureSpec) => (ctx: { call_id: string; tool: string }) =>
  failure({ ...ctx, environment: "sandbox" }, spec);

let server: Server | null = null;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

async function scriptedServer(api: WireApi, turns: Turn[], script: Script) {
  const seen: Seen[] = [];
  let turn = 0;
  let calls = 0;
  server = createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    seen.push({
      path: `${request.method} ${url.pathname}${url.search}`,
      headers: request.headers,
      body,
      at: Date.now(),
    });
    const send = (status: number, json: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(json));
    };
    if (url.pathname === "/v1/tools") {
      const format = url.searchParams.get("format") as "openai" | "openai-responses";
      return send(
        200,
        success({ call_id: "call_tools", environment: "sandbox" }, specsFor(catalog, "support", format)),
      );
    }
    if (url.pathname === `/v1/runs/${RUN}/calls`) {
      const { tool, args } = body as { tool: string; args: unknown };
      const key = `${tool} ${typeof args === "string" ? args : JSON.stringify(args)}`;
      const answer = script.get(key)?.shift();
      if (!answer) return send(500, { unscripted: key });
      return send(200, answer({ call_id: `call_${++calls}`, tool }));
    }
    if (url.pathname === "/v1/chat/completions" || url.pathname === "/v1/responses") {
      const next = turns[turn++];
      if (!next) return send(500, { error: "no more turns" });
      return send(200, api === "chat" ? chatReply(next) : responsesReply(next));
    }
    send(404, { error: url.pathname });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}`, seen };
}

const REFUND = { order_id: "B2101", amount_cents: 500, reason: "user_cancel" };
const OTHER = { order_id: "B2102", amount_cents: 300, reason: "user_cancel" };
const MALFORMED = '{"order_id": "B2101", "amount_cents": 5';
const RETRY_AFTER_MS = 150;

/** A run in which the model reads in parallel, refunds past an approval, sends a malformed call twice and retries a rate limit. */
function story(): { turns: Turn[]; script: Script } {
  const turns: Turn[] = [
    {
      calls: [
        { id: "c1", name: "lookup_order", arguments: '{"order_id":"B2101"}' },
        { id: "c2", name: "get_customer_profile", arguments: '{"customer_id":"C201"}' },
      ],
    },
    { calls: [{ id: "c3", name: "issue_refund", arguments: JSON.stringify(REFUND) }] },
    { calls: [{ id: "c4", name: "issue_refund", arguments: MALFORMED }] },
    { calls: [{ id: "c5", name: "issue_refund", arguments: MALFORMED }] },
    { calls: [{ id: "c6", name: "issue_refund", arguments: JSON.stringify(OTHER) }] },
    { calls: [{ id: "c7", name: "issue_refund", arguments: JSON.stringify(OTHER) }] },
    { text: "Refunded 500 cents on B2101 and 300 on B2102." },
  ];
  const script: Script = new Map([
    ['lookup_order {"order_id":"B2101"}', [ok({ order_id: "B2101", status: "shipped" })]],
    ['get_customer_profile {"customer_id":"C201"}', [ok({ customer_id: "C201" })]],
    [
      `issue_refund ${JSON.stringify(REFUND)}`,
      [
        fail({ code: "approval_required", message: "A human must approve this.", retry_after_ms: 30_000 }),
        ok({ refund_id: "re_1" }),
      ],
    ],
    [`issue_refund ${MALFORMED}`, [fail({ code: "validation_error", message: "args must be an object" })]],
    [
      `issue_refund ${JSON.stringify(OTHER)}`,
      [
        fail({ code: "rate_limited", message: "Slow down.", retry_after_ms: RETRY_AFTER_MS }),
        ok({ refund_id: "re_2" }),
      ],
    ],
  ]);
  return { turns, script };
}

const calls = (seen: Seen[]) => seen.filter((entry) => entry.path === `POST /v1/runs/${RUN}/calls`);
const modelTurns = (seen: Seen[]) =>
  seen.filter((entry) => /\/v1\/(chat\/completions|responses)$/.test(entry.path));

async function runStory(api: WireApi) {
  const { turns, script } = story();
  const { base, seen } = await scriptedServer(api, turns, script);
  const agent = new OpenAiCompatibleAgent({
    baseUrl: `${base}/v1`,
    apiKey: "k",
    model: "m",
    api,
    maxWaitMs: 2_000,
  });
  const client = new ProxyClient(base).forRun({ run_id: RUN, run_token: "tok" });
  const result = await agent.run({ prompt: "Refund B2101 and B2102.", plan: [] }, client);
  return { result, seen, client };
}

describe.each<[WireApi, "openai" | "openai-responses"]>([
  ["chat", "openai"],
  ["responses", "openai-responses"],
])("the OpenAI-compatible agent over %s", (api, format) => {
  it("sends the model exactly the tool specs the proxy serves for its format, at temperature 0", async () => {
    const { seen } = await runStory(api);
    expect(seen[0]?.path).toBe(`GET /v1/tools?format=${format}`);
    const served = specsFor(catalog, "support", format).tools;
    for (const turn of modelTurns(seen)) {
      expect(turn.body.tools).toEqual(served);
      expect(turn.body).toMatchObject({ model: "m", temperature: 0, tool_choice: "auto" });
    }
  });

  it("sends parallel calls together, each answer back under its own call id, in the format's shape", async () => {
    const { seen } = await runStory(api);
    const [first, second] = calls(seen);
    expect([first?.body.tool, second?.body.tool]).toEqual(["lookup_order", "get_customer_profile"]);
    const next = modelTurns(seen)[1]?.body;
    const items = (api === "chat" ? next?.messages : next?.input) as Array<Record<string, unknown>>;
    const answers = items.filter((item) => item.role === "tool" || item.type === "function_call_output");
    expect(answers.map((item) => item.tool_call_id ?? item.call_id)).toEqual(["c1", "c2"]);
    const envelope = JSON.parse(String(answers[0]?.content ?? answers[0]?.output)) as Envelope;
    expect(envelope).toMatchObject({ outcome: "success", data: { order_id: "B2101" } });
    if (api === "responses") {
      // The output items go back whole, the reasoning item included, before their outputs.
      expect(items.some((item) => item.type === "reasoning")).toBe(true);
      expect(items.filter((item) => item.type === "function_call").map((item) => item.call_id)).toEqual([
        "c1",
        "c2",
      ]);
      expect(next).toMatchObject({ store: false });
    }
  });

  it("obeys the envelope: waits for the approval with Prefer: wait, retries no sooner than the hint, never resends a call ended for good", async () => {
    const { seen, result } = await runStory(api);
    const sent = calls(seen);
    const refunds = sent.filter((entry) => JSON.stringify(entry.body.args) === JSON.stringify(REFUND));
    expect(refunds.map((entry) => entry.headers.prefer)).toEqual([undefined, "wait=2"]);
    const malformed = sent.filter((entry) => entry.body.args === MALFORMED);
    expect(malformed).toHaveLength(1);
    const told = modelTurns(seen)[4]?.body;
    expect(JSON.stringify(told)).toContain("it was not sent again");
    const [limited, retried] = sent.filter(
      (entry) => JSON.stringify(entry.body.args) === JSON.stringify(OTHER),
    );
    expect((retried?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(RETRY_AFTER_MS);
    // The malformed call ended for good and nothing made it good: not a completed task.
    expect(result).toMatchObject({
      status: "stopped",
      reason: "Refunded 500 cents on B2101 and 300 on B2102.",
    });
  });

  it("sends the model's arguments as written: no idempotency key, no approval flag, no header of the kind", async () => {
    const { seen, client } = await runStory(api);
    for (const entry of calls(seen)) {
      const args = JSON.stringify(entry.body.args);
      expect(args).not.toMatch(/idempotency|approv|confirm/i);
      expect(Object.keys(entry.body).sort()).toEqual(["args", "tool"]);
      expect(entry.headers["idempotency-key"]).toBeUndefined();
      expect(entry.headers["x-call-intent"]).toBeUndefined();
    }
    expect(calls(seen).find((entry) => entry.body.args === MALFORMED)?.body.args).toBe(MALFORMED);
    expect(client.log.map((call) => call.tool)).toEqual([
      "lookup_order",
      "get_customer_profile",
      "issue_refund",
      "issue_refund",
      "issue_refund",
      "issue_refund",
      "issue_refund",
    ]);
  });

  it("ends on a refusal, calling nothing", async () => {
    const { base, seen } = await scriptedServer(api, [{ refusal: "I can't help with refunds." }], new Map());
    const agent = new OpenAiCompatibleAgent({ baseUrl: `${base}/v1`, apiKey: "k", model: "m", api });
    const client = new ProxyClient(base).forRun({ run_id: RUN, run_token: "tok" });
    const result = await agent.run({ prompt: "Refund everything.", plan: [] }, client);
    expect(result).toEqual({ status: "stopped", reason: "the model refused: I can't help with refunds." });
    expect(calls(seen)).toHaveLength(0);
  });
});

describe("OPENAI_API", () => {
  it("chooses the wire format: chat unless set, responses when asked; anything else is refused by name", () => {
    expect(wireApiFromEnv(undefined)).toBe("chat");
    expect(wireApiFromEnv(" ")).toBe("chat");
    expect(wireApiFromEnv("responses")).toBe("responses");
    expect(() => wireApiFromEnv("completions")).toThrow(
      'OPENAI_API is "completions": it must be "chat" or "responses"',
    );
  });
});
