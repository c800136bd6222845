import type { SettleVerdict, ToolSpec } from "../catalog/define-tool";
import { buildRequest, type Execution } from "../machine/request";
import type { StoredRequest } from "../machine/run-state";
import type { AttemptRecord } from "../wire/trace-entry";

/** Sends one request of the call (an attempt, a read) as the execution does. */
export type SendOne = (target: ToolSpec, request: StoredRequest) => Promise<Execution>;

/** What a settling read found: its verdict (null when the read itself failed) and its attempts, as checks. */
export interface SettleCheck {
  verdict: SettleVerdict | null;
  attempts: AttemptRecord[];
}

/**
 * Sends the tool's settling read (its `settle`: a read tool of its namespace that lists the effects
 * this call could have made) and judges its answer: the call's effect, made since `since`, found,
 * absent or unclear. A read asks nothing of the upstream that could act, so it is sent like any read,
 * retried on a transient failure; its attempts are the call's checks, never another attempt at it.
 */
export async function readToSettle(
  tool: ToolSpec,
  args: Record<string, unknown>,
  since: number,
  context: { callId: string; findTool: (name: string) => ToolSpec | undefined; send: SendOne },
): Promise<SettleCheck> {
  const settle = tool.settle;
  const reader = settle ? context.findTool(settle.tool) : undefined;
  // The catalog's check refuses a settle naming no read of the namespace; a served one always has it.
  if (!settle || !reader) return { verdict: null, attempts: [] };
  const request = buildRequest(reader, settle.args(args), { key: null, callId: context.callId });
  const read = await context.send(reader, request);
  const attempts = read.attempts.map((attempt) => ({ ...attempt, purpose: "check" as const }));
  return { verdict: read.ok ? settle.judge(args, read.data, since) : null, attempts };
}
