import type { ProxyClient, RunClient } from "../agents/client";
import type { Agent, AgentResult } from "../agents/types";
import { NO_CALL_CHOICES } from "./call-metrics";
import type { EvalCase } from "./case-types";
import { OPERATOR_KEYS, TENANT_KEYS } from "./credentials";
import { caseInLane } from "./lanes";
import { SimulatedOperator } from "./operator";
import { type CaseOutcome, writeTrace } from "./report";
import type { SandboxAdmin } from "./sandbox-admin";
import { judgeCase } from "./verdict";

/** No case should take this long; one that does is stopped and counted as failed. */
const CASE_TIMEOUT_MS = 90_000;

/**
 * One agent, one case: opens a run with the case's scenario (as the orchestrator, with the tenant
 * key), lets the agent work through its run client while the simulated operator watches the
 * approvals, then gathers the evidence (the sandbox's records, the approvals, the proxy's trace),
 * judges it and writes the case's trace file.
 */
export async function runCase(opts: {
  agent: Agent;
  /** The case as written; it runs in `lane`, on that lane's orders and customers. */
  evalCase: EvalCase;
  lane: number;
  proxy: ProxyClient;
  admin: SandboxAdmin;
}): Promise<CaseOutcome> {
  const { agent, proxy, admin, lane } = opts;
  const evalCase = caseInLane(opts.evalCase, lane);
  const started = Date.now();
  let runId: string | null = null;
  try {
    const opened = await proxy.openRun(TENANT_KEYS[evalCase.tenant], {
      namespace: "support",
      ...(evalCase.limits ? { limits: evalCase.limits } : {}),
      ...(evalCase.scenario ? { scenario: evalCase.scenario } : {}),
      ...(evalCase.tools ? { tools: evalCase.tools } : {}),
    });
    runId = opened.run_id;
    const client = proxy.forRun(opened);
    const operator = new SimulatedOperator({
      baseUrl: proxy.baseUrl,
      operatorKey: OPERATOR_KEYS[evalCase.tenant],
      runId,
      policy: evalCase.operator ?? "approve_intended",
      intended: evalCase.approves ?? evalCase.expect.effects,
      admin,
      tenant: evalCase.tenant,
    });
    operator.start();
    let result: AgentResult;
    try {
      result = await withTimeout(agent.run(evalCase.task, client), CASE_TIMEOUT_MS);
    } finally {
      await operator.stop();
    }
    const evidence = await gather(client, operator, admin, evalCase, runId);
    await client.end();
    const verdict = judgeCase({
      tenant: evalCase.tenant,
      expect: evalCase.expect,
      result,
      calls: client.log,
      source: evidence.source,
      approvals: evidence.approvals,
      tainted: evidence.tainted,
      scenario: evalCase.scenario ?? [],
      classes: evalCase.classes,
      trace: evidence.trace,
    });
    const traceFile = writeTrace(agent.name, evalCase.id, {
      case: evalCase,
      agent: agent.name,
      lane,
      run_id: runId,
      result,
      verdict,
      calls: client.log,
      operator_decisions: operator.decisions,
      approvals: evidence.approvals,
      proxy_trace: evidence.trace,
      source: evidence.source,
    });
    return outcome(agent, evalCase, lane, runId, started, verdict, null, traceFile);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const traceFile = writeTrace(agent.name, evalCase.id, {
      case: evalCase,
      agent: agent.name,
      lane,
      run_id: runId,
      error: message,
    });
    const verdict = {
      passed: false,
      failures: [`could not be judged: ${message}`],
      calls: 0,
      invalid_calls: 0,
      replays: 0,
      approvals_requested: 0,
      duplicates: 0,
      bypasses: 0,
      escalated: false,
      charged_polls: 0,
      faults: [],
      fixture_defects: 0,
      classes: {},
      ...NO_CALL_CHOICES,
    };
    return outcome(agent, evalCase, lane, runId, started, verdict, message, traceFile);
  }
}

async function gather(
  client: RunClient,
  operator: SimulatedOperator,
  admin: SandboxAdmin,
  evalCase: EvalCase,
  runId: string,
) {
  const [status, trace, approvals, source] = await Promise.all([
    client.status(),
    client.trace(),
    operator.approvalsOfRun(),
    admin.effectsOf(evalCase.tenant, runId),
  ]);
  return { tainted: status.tainted_by !== null && status.tainted_by !== undefined, trace, approvals, source };
}

function outcome(
  agent: Agent,
  evalCase: EvalCase,
  lane: number,
  runId: string | null,
  started: number,
  verdict: CaseOutcome["verdict"],
  error: string | null,
  traceFile: string,
): CaseOutcome {
  return {
    agent: agent.name,
    case_id: evalCase.id,
    group: evalCase.group,
    title: evalCase.title,
    run_id: runId,
    duration_ms: Date.now() - started,
    verdict,
    error,
    trace_file: traceFile,
    lane,
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the agent did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
