/**
 * A client written only against the types openapi-typescript generates from GET /openapi.json
 * (dist/openapi/api.d.ts, by scripts/check-openapi.mjs). It must type-check with no cast on the
 * answers: if the document stopped naming a payload's schema, `data` would be `unknown` and this
 * file would not compile. `tsc -p test/openapi-client` checks it; nothing runs it.
 */
import type { paths } from "../../dist/openapi/api";

type OpenRun = paths["/v1/runs"]["post"];
type OpenRunBody = OpenRun["requestBody"]["content"]["application/json"];
type RunOpened = OpenRun["responses"]["201"]["content"]["application/json"];
type CallTool = paths["/v1/runs/{run_id}/calls"]["post"];
type CallBody = CallTool["requestBody"]["content"]["application/json"];
type CallSucceeded = CallTool["responses"]["200"]["content"]["application/json"];

/** True only when A and B are the same type; `any` or `unknown` where a type belongs fails it. */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const runTokenIsString: Equals<RunOpened["data"]["run_token"], string> = true;
const outcomes: Equals<RunOpened["outcome"], "success" | "retryable_failure" | "terminal_failure"> = true;

/** Opens a run with a tenant key; answers its id and token. */
export async function openRun(
  origin: string,
  tenantKey: string,
  body: OpenRunBody = { namespace: "support", limits: { max_calls: 10 } },
): Promise<{ runId: string; runToken: string }> {
  const response = await fetch(`${origin}/v1/runs`, {
    method: "POST",
    headers: { authorization: `Bearer ${tenantKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`the run did not open: HTTP ${response.status}`);
  const envelope = (await response.json()) as RunOpened;
  const runToken: string = envelope.data.run_token;
  const expiresAt: string = envelope.data.expires_at;
  // @ts-expect-error: a misspelt field is a compile error, not undefined at run time.
  envelope.data.run_tokn;
  if (Number.isNaN(Date.parse(expiresAt))) throw new Error("expires_at is not a date");
  return { runId: envelope.data.run_id, runToken };
}

/** Looks up an order in the run; a tool call's `data` narrows by the envelope's `tool`. */
export async function orderStatus(origin: string, run: { runId: string; runToken: string }, orderId: string) {
  const call: CallBody = { tool: "lookup_order", args: { order_id: orderId } };
  const response = await fetch(`${origin}/v1/runs/${run.runId}/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${run.runToken}`, "content-type": "application/json" },
    body: JSON.stringify(call),
  });
  if (response.status !== 200) throw new Error(`the call failed: HTTP ${response.status}`);
  const envelope = (await response.json()) as CallSucceeded;
  if (envelope.tool !== "lookup_order") throw new Error(`an answer of ${envelope.tool}`);
  // Too large to return inline: a summary and a handle to page through.
  if ("next_step" in envelope.data) return { pages: envelope.data.summary.pages };
  const status: "processing" | "shipped" | "delivered" | "cancelled" = envelope.data.status;
  return { status, refunds: envelope.data.refunds.length };
}

export const typeChecks = { runTokenIsString, outcomes };
