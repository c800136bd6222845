// `npm run eval`: every case for every agent, against the proxy and its sandbox, judged at the source.
//
//   npm run eval                       all cases, naive and careful agents; starts its own proxy
//   npm run eval -- --ci               what CI runs: every case, 2 at a time (CI has 2 cores)
//   npm run eval -- --quick            a reduced set for a fast local check (cases marked quick)
//   npm run eval -- --only a,b         these case ids only
//   npm run eval -- --agent openai      the scripted agents and the OpenAI-compatible one, side by
//                                       side in one report (it needs OPENAI_*: agents/openai-compatible.ts)
//   npm run eval -- --agents careful,openai    exactly these agents
//   EVAL_BASE_URL=http://127.0.0.1:8787 npm run eval    against a proxy already running (npm start)
//
// Writes reports/eval.json and reports/eval-traces/<agent>-<case>.json; exits 1 on any duplicate
// side effect, approval bypass, case that could not be judged, or planted fault that never reached
// its upstream though the agent made the call it targets.
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import { CarefulAgent } from "../agents/careful";
import { ProxyClient } from "../agents/client";
import { NaiveAgent } from "../agents/naive";
import { OpenAiCompatibleAgent, openAiConfigFromEnv } from "../agents/openai-compatible";
import type { Agent } from "../agents/types";
import { existingProxy, isHealthy, type LocalProxy, startProxy } from "../scripts/local-proxy";
import type { EvalCase } from "./case-types";
import { CASES } from "./cases";
import { casesFingerprint } from "./cases-fingerprint";
import { freeLanes } from "./lanes";
import { ROOT } from "./paths";
import {
  type AgentSummary,
  type CaseOutcome,
  formatClassTable,
  formatTable,
  resetTraceDir,
  summarizeAgent,
  TRACE_DIR,
  writeReport,
} from "./report";
import { runCase } from "./run-case";
import { SandboxAdmin } from "./sandbox-admin";
import { connectSandboxOf } from "./sandbox-of-proxy";

function agentsNamed(names: string[]): Agent[] {
  return names.map((name) => {
    switch (name) {
      case "naive":
        return new NaiveAgent();
      case "careful":
        return new CarefulAgent();
      case "openai": {
        const config = openAiConfigFromEnv();
        if (!config)
          throw new Error("the openai agent needs OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL");
        return new OpenAiCompatibleAgent(config);
      }
      default:
        throw new Error(`unknown agent "${name}": naive, careful or openai`);
    }
  });
}

/** The agents every evaluation runs unless told otherwise. */
const SCRIPTED = ["naive", "careful"];

/** `--agents a,b` names exactly the agents; each `--agent x` adds one beside them, once. */
function agentNames(agents: string, added: readonly string[]): string[] {
  const names = agents.split(",").map((name) => name.trim());
  return [...new Set([...names, ...added.map((name) => name.trim())])].filter((name) => name !== "");
}

function selectCases(quick: boolean, only: string | undefined): EvalCase[] {
  const ids = only ? new Set(only.split(",").map((id) => id.trim())) : null;
  const selected = CASES.filter((c) => (ids ? ids.has(c.id) : !quick || c.quick));
  const unknown = ids ? [...ids].filter((id) => !CASES.some((c) => c.id === id)) : [];
  if (unknown.length > 0) throw new Error(`no such case: ${unknown.join(", ")}`);
  return selected;
}

/** The commit evaluated, and whether tracked files had changes beside it. */
function commitOf(): { commit: string; dirty: boolean } {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
    return {
      commit: git("rev-parse", "HEAD"),
      dirty: git("status", "--porcelain", "--untracked-files=no") !== "",
    };
  } catch {
    return { commit: "unknown", dirty: false };
  }
}

/** Runs jobs with at most `limit` in flight, in order of the list. */
async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index] as T);
      }
    }),
  );
  return results;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      ci: { type: "boolean", default: false },
      quick: { type: "boolean", default: false },
      only: { type: "string" },
      agents: { type: "string", default: SCRIPTED.join(",") },
      agent: { type: "string", multiple: true },
      concurrency: { type: "string" },
    },
  });
  const began = Date.now();
  const cases = selectCases(values.quick ?? false, values.only);
  const set = values.only ? "selected" : values.quick ? "quick" : values.ci ? "ci (full)" : "full";
  const agents = agentsNamed(agentNames(values.agents ?? "", values.agent ?? []));
  // Every case's run is its own Durable Object; a few at once keep the machine busy without
  // starving wrangler. CI machines have two cores.
  const concurrency = Math.max(1, Number(values.concurrency ?? (values.ci ? 2 : 4)) || 1);

  let local: LocalProxy;
  const baseUrl = process.env.EVAL_BASE_URL;
  if (baseUrl) {
    if (!(await isHealthy(baseUrl)))
      throw new Error(`EVAL_BASE_URL ${baseUrl} does not answer /healthz with 200`);
    local = existingProxy(baseUrl);
    console.log(`eval: using the proxy at ${local.url}`);
  } else {
    console.log("eval: starting the proxy and its sandbox (wrangler dev, fresh state) ...");
    local = await startProxy();
    console.log(`eval: proxy ready on ${local.url} after ${((Date.now() - began) / 1000).toFixed(1)} s`);
  }
  // A proxy started here registered in this process's registry; another one wherever its stack did.
  const admin = local.started ? await SandboxAdmin.connect() : await connectSandboxOf(local.url);
  try {
    const proxy = new ProxyClient(local.url);
    resetTraceDir();
    // Each agent acts on a lane of the evaluation's data no other run has written to.
    const lanes = await freeLanes(admin, agents.length);
    const jobs = agents.flatMap((agent, index) =>
      cases.map((evalCase) => ({ agent, evalCase, lane: lanes[index] as number })),
    );
    const total = jobs.length;
    console.log(
      `eval: ${cases.length} cases × ${agents.length} agents = ${total} runs (${set} set), ${concurrency} at a time; lanes ${agents.map((agent, index) => `${agent.name} ${lanes[index]}`).join(", ")}`,
    );
    let done = 0;
    const outcomes = await pool(jobs, concurrency, async ({ agent, evalCase, lane }) => {
      const result = await runCase({ agent, evalCase, lane, proxy, admin });
      done++;
      const v = result.verdict;
      const mark = result.error ? "ERROR" : v.passed ? "pass " : "FAIL ";
      const safety = v.duplicates + v.bypasses > 0 ? `  !! ${v.duplicates} dup, ${v.bypasses} bypass` : "";
      console.log(
        `[${String(done).padStart(3)}/${total}] ${mark} ${agent.name.padEnd(8)} ${evalCase.group.padEnd(11)} ${evalCase.id.padEnd(32)} ${String(v.calls).padStart(2)} calls ${(result.duration_ms / 1000).toFixed(1).padStart(5)} s${safety}`,
      );
      for (const failure of v.failures) console.log(`          ${failure}`);
      return result;
    });

    const summaries: Record<string, AgentSummary> = {};
    console.log("");
    for (const agent of agents) {
      summaries[agent.name] = summarizeAgent(outcomes.filter((outcome) => outcome.agent === agent.name));
      console.log(formatTable(agent.name, summaries[agent.name] as AgentSummary));
      console.log("");
      console.log(formatClassTable(agent.name, summaries[agent.name] as AgentSummary));
      console.log("");
    }
    const errors = outcomes.filter((outcome) => outcome.error !== null);
    const unsafe = outcomes.filter((o) => o.verdict.duplicates > 0 || o.verdict.bypasses > 0);
    const unfired = outcomes.filter((o) => o.verdict.fixture_defects > 0);
    const durationMs = Date.now() - began;
    const reportFile = writeReport({
      generated_at: new Date().toISOString(),
      ...commitOf(),
      set,
      concurrency,
      // Every case, or a subset: only a report of every case may be written into docs/evaluation.md.
      all_cases: cases.length === CASES.length,
      cases_fingerprint: casesFingerprint(),
      base_url: local.url,
      started_proxy: local.started,
      duration_ms: durationMs,
      cases: cases.length,
      agents: summaries,
      results: outcomes.map(({ trace_file, ...rest }: CaseOutcome) => ({ ...rest, trace_file })),
    });
    console.log(`eval: wrote ${reportFile} and ${total} traces in ${TRACE_DIR}`);
    console.log(`eval: finished in ${(durationMs / 1000).toFixed(1)} s`);
    if (unsafe.length > 0) {
      console.error(
        `eval: UNSAFE: duplicate side effects or approval bypasses in ${unsafe.map((o) => `${o.agent}/${o.case_id}`).join(", ")}`,
      );
    }
    if (errors.length > 0) {
      console.error(
        `eval: ${errors.length} run(s) could not be judged: ${errors.map((o) => `${o.agent}/${o.case_id}`).join(", ")}`,
      );
    }
    if (unfired.length > 0) {
      console.error(
        `eval: DEFECT: a planted fault never reached its upstream in ${unfired.map((o) => `${o.agent}/${o.case_id}`).join(", ")} (see the lines above)`,
      );
    }
    return unsafe.length > 0 || errors.length > 0 || unfired.length > 0 ? 1 : 0;
  } finally {
    await admin.dispose();
    local.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`eval: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
