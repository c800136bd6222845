import type { DecisionFact } from "../catalog/define-tool";
import { newContextCallId } from "../core/ids";
import type { Env } from "../env";
import { buildRequest } from "../machine/request";
import { problemFields, validateArguments } from "../machine/validate";
import { applyMasks } from "../shaping/mask";
import { catalog } from "../tools";
import { readForOperator } from "../upstream/operator-read";

/** The facts an operator reads before deciding, or why they could not be read. */
export interface DecisionContextView {
  /** The read tool the facts come from, e.g. `lookup_order`. */
  source: string;
  facts: DecisionFact[];
  /** Set when the read failed: the page says so rather than show nothing. */
  problem: string | null;
}

/** Reading the context must not hold the page for long: the operator can reload. */
const CONTEXT_TIMEOUT_MS = 2_500;

/**
 * Reads what an operator needs to judge a pending approval, as the tool declares it
 * (`decision_context`): one fresh read through the read tool's own binding and credential
 * (`upstream/operator-read.ts`), shaped and masked as the model would see it, turned into facts.
 * Null when the tool declares none.
 * Nothing here touches the run's ledger: the read is not a call of the run and spends no budget.
 */
export async function readDecisionContext(
  env: Env,
  approval: { tool: string; tenant: string; run_id: string; args: Record<string, unknown> },
  namespace: string,
): Promise<DecisionContextView | null> {
  const tool = catalog.find(namespace, approval.tool);
  const context = tool?.decision_context;
  if (!context) return null;
  const reader = catalog.find(namespace, context.tool);
  const unreadable = (problem: string): DecisionContextView => ({ source: context.tool, facts: [], problem });
  if (!reader) return unreadable(`${context.tool} is not reachable from here.`);
  // Checked as an agent's call of the read tool would be: a value the write accepts but the read
  // refuses (an empty or "." segment of its path) must not make the page read another resource.
  const args = validateArguments(reader.input, context.args(approval.args));
  if (!args.ok) {
    const fields = problemFields(args.problems).join(", ");
    return unreadable(
      `${context.tool} cannot be asked about this call: its arguments do not fit ${context.tool} (${fields}). Judge the call without it.`,
    );
  }
  const notReachable = unreadable(`${context.tool} is not reachable from here.`);
  if (!reader.upstream) return notReachable;
  try {
    const request = buildRequest(reader, args.args, { key: null, callId: newContextCallId() });
    const execution = await readForOperator(env, approval, reader, request, CONTEXT_TIMEOUT_MS);
    if (!execution) return notReachable;
    if (!execution.ok) {
      return unreadable(
        `${context.tool} answered ${execution.failure.code}: ${execution.failure.message} Judge the call without it, or reload.`,
      );
    }
    return {
      source: context.tool,
      facts: context.facts(approval.args, applyMasks(execution.data, reader.sensitive)),
      problem: null,
    };
  } catch (error) {
    console.error("decision context read failed", approval.tool, error);
    return unreadable(`${context.tool} could not be read. Judge the call without it, or reload.`);
  }
}
