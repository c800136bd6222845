// `npm run demo`: the opening story as a transcript. The payment API answers 502, the agent's loop
// retries three times, and the proxy turns it into one refund: over REST, then over MCP.
//
// Uses the proxy at DEMO_BASE_URL (default http://127.0.0.1:8787) when one answers there, else starts its
// own; either way it reads the sandbox behind that proxy (eval/sandbox-of-proxy.ts), in whichever dev
// registry its stack was started with.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ProxyClient, type RunClient } from "../agents/client";
import { TENANT_KEYS } from "../eval/credentials";
import type { SandboxAdmin } from "../eval/sandbox-admin";
import { connectSandboxOf } from "../eval/sandbox-of-proxy";
import { existingProxy, isHealthy, type LocalProxy, startProxy } from "../scripts/local-proxy";
import { type Envelope, envelopeSchema } from "../src/wire/envelope";
import { heading, note, say, showEnvelope, showRefunds, showRequests } from "./print";

const DEFAULT_URL = "http://127.0.0.1:8787";
const ORDER = "B2002";
const REFUND = { order_id: ORDER, amount_cents: 500, reason: "user_cancel" };
/** Chosen by the orchestrator when it opens the run; the model never sees or sets it. */
const SCENARIO = [{ mode: "bad_gateway", tool: "issue_refund", times: 1 }];
const RETRIES = 3;

async function openStoryRun(proxy: ProxyClient, transport: string) {
  say(`The orchestrator opens a run for tenant globex (${transport}), with a scenario for the sandbox.`);
  const opened = await proxy.openRun(TENANT_KEYS.globex, { namespace: "support", scenario: SCENARIO });
  note(`POST /v1/runs {"namespace":"support","scenario":${JSON.stringify(SCENARIO)}}`);
  note(`run ${opened.run_id}: the payment API will answer 502 Bad Gateway to this run's first refund.`);
  note("globex auto-approves refunds up to 1000 cents, so this 500-cent refund needs no human:");
  note("the story has no approval step in it (acme's would wait for an operator first).");
  return opened;
}

async function restStory(proxy: ProxyClient, admin: SandboxAdmin): Promise<void> {
  heading("Over REST: POST /v1/runs/{run_id}/calls");
  const opened = await openStoryRun(proxy, "REST");
  const client = proxy.forRun(opened);

  say(`The agent looks up order ${ORDER}.`);
  const order = await client.call("lookup_order", { order_id: ORDER });
  showEnvelope(order, lastStatus(client));
  const data = order.data as { status?: string; refundable_cents?: number; refunds?: unknown[] } | null;
  note(
    `  order ${ORDER}: ${data?.status}, refundable ${data?.refundable_cents} cents, ${data?.refunds?.length} refunds`,
  );

  say(`The agent refunds 500 cents: issue_refund ${JSON.stringify(REFUND)}`);
  showEnvelope(await client.call("issue_refund", REFUND), lastStatus(client));
  note("  The sandbox answered an nginx 502 page; the agent gets this envelope instead, never the page.");

  for (let retry = 1; retry <= RETRIES; retry++) {
    say(
      `The agent's loop does not read envelopes: it sends the identical call again (retry ${retry} of ${RETRIES}).`,
    );
    showEnvelope(await client.call("issue_refund", REFUND), lastStatus(client));
  }

  say("What really happened, from the payments sandbox's own records:");
  const effects = await admin.effectsOf("globex", opened.run_id);
  showRefunds(effects.refunds);
  showRequests(effects.requests, "/refunds");
  note("One refund. The first request failed at the gateway; the first retry was resent with the same key");
  note(
    "and succeeded; the next two identical calls were refused by the repeat breaker and never left the proxy.",
  );
  await client.end();
}

/** An MCP client over real HTTP to the proxy's /mcp endpoint, authenticated with the run token. */
async function connectMcp(baseUrl: string, runToken: string): Promise<Client> {
  const client = new Client({ name: "demo-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${runToken}` } },
  });
  await client.connect(transport);
  return client;
}

async function mcpStory(proxy: ProxyClient, admin: SandboxAdmin): Promise<void> {
  heading("The same story over MCP: tools/call on POST /mcp");
  const opened = await openStoryRun(proxy, "MCP");
  const mcp = await connectMcp(proxy.baseUrl, opened.run_token);
  try {
    const { tools } = await mcp.listTools();
    say(`The agent connects an MCP client with the run token and lists ${tools.length} tools.`);
    note(tools.map((tool) => tool.name).join(", "));

    const call = async (name: string, args: Record<string, unknown>): Promise<Envelope> => {
      const result = await mcp.callTool({ name, arguments: args });
      note(`isError: ${String(result.isError ?? false)}`);
      return envelopeSchema().parse(result.structuredContent);
    };
    say(`tools/call issue_refund ${JSON.stringify(REFUND)}`);
    showEnvelope(await call("issue_refund", REFUND));
    for (let retry = 1; retry <= RETRIES; retry++) {
      say(`The agent retries the identical tools/call (retry ${retry} of ${RETRIES}).`);
      showEnvelope(await call("issue_refund", REFUND));
    }
  } finally {
    await mcp.close();
  }
  say("The payments sandbox's records for the MCP run:");
  const effects = await admin.effectsOf("globex", opened.run_id);
  showRefunds(effects.refunds);
  showRequests(effects.requests, "/refunds");
  note("Same pipeline, same ledger, same envelope: one refund again.");
}

/**
 * A tool of a remote MCP server (the sandbox's helpdesk, federated in catalog/helpdesk.yaml): the
 * answer of the first note is lost on the way back, the loop repeats the call, and the server,
 * which honours the proxy's key, holds one note.
 */
async function federatedStory(proxy: ProxyClient, admin: SandboxAdmin): Promise<void> {
  heading("A federated MCP server: the helpdesk's add_ticket_note, through the proxy");
  const scenario = [{ mode: "truncated", tool: "add_ticket_note", times: 1 }];
  say(
    "The orchestrator opens a run for tenant acme in the helpdesk namespace, whose tools live on a remote MCP server, each pinned to the definition a human reviewed.",
  );
  const opened = await proxy.openRun(TENANT_KEYS.acme, { namespace: "helpdesk", scenario });
  note(`POST /v1/runs {"namespace":"helpdesk","scenario":${JSON.stringify(scenario)}}`);
  note("The helpdesk's first answer to this run's note will be cut off on the way back.");
  const client = proxy.forRun(opened);
  const note_ = { ticket_id: "HD-1001", body: `Refund issued for order A1001 (${opened.run_id}).` };
  const before = await admin.get<{ count: number }>(
    "/_admin/helpdesk/effects?tenant=acme&tool=add_ticket_note",
  );
  say(`tools/call add_ticket_note ${JSON.stringify(note_)}, sent by the proxy with its derived key in _meta`);
  showEnvelope(await client.call("add_ticket_note", note_), lastStatus(client));
  say("The agent's loop sends the identical call again.");
  showEnvelope(await client.call("add_ticket_note", note_), lastStatus(client));
  const after = await admin.get<{ count: number }>(
    "/_admin/helpdesk/effects?tenant=acme&tool=add_ticket_note",
  );
  note(`The helpdesk's own count of notes added by this story: ${after.count - before.count}.`);
  note("The second call went out under the same key; the helpdesk answered its first note again.");
  await client.end();
}

function moral(): void {
  heading("In short");
  note(`Each run: ${RETRIES + 1} identical refund calls from an agent that ignores what it is told,`);
  note("2 requests to the payment API (both with one Idempotency-Key derived by the proxy), 1 refund.");
  note("Without the proxy, the same loop against the same API makes three refunds (four, had the 502");
  note(
    "come after the API acted): nothing tells the API the retries are one refund, and nothing stops the loop.",
  );
}

/** The HTTP status of the client's last call, to show beside its envelope. */
function lastStatus(client: RunClient): number | undefined {
  return client.log.at(-1)?.http_status;
}

async function findOrStartProxy(): Promise<LocalProxy> {
  const url = process.env.DEMO_BASE_URL ?? DEFAULT_URL;
  if (await isHealthy(url)) {
    console.log(`demo: using the proxy already running at ${url}`);
    return existingProxy(url);
  }
  console.log(`demo: nothing answers ${url}/healthz; starting the proxy and its sandbox (wrangler dev) ...`);
  const started = await startProxy();
  console.log(`demo: proxy ready on ${started.url}`);
  return started;
}

async function main(): Promise<void> {
  const local = await findOrStartProxy();
  let admin: SandboxAdmin;
  try {
    admin = await connectSandboxOf(local.url);
  } catch (error) {
    local.stop();
    throw error;
  }
  try {
    const proxy = new ProxyClient(local.url);
    await restStory(proxy, admin);
    await mcpStory(proxy, admin);
    await federatedStory(proxy, admin);
    moral();
    console.log("");
  } finally {
    await admin.dispose();
    local.stop();
  }
}

main().catch((error: unknown) => {
  console.error(`demo: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
