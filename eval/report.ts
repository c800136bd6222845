import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CASE_GROUPS, type CaseGroup } from "./case-types";
import { ROOT } from "./paths";
import { type AgentMetrics, type CaseVerdict, summarize } from "./verdict";

/** One agent's run of one case, as the report lists it. */
export interface CaseOutcome {
  agent: string;
  case_id: string;
  group: CaseGroup;
  title: string;
  run_id: string | null;
  duration_ms: number;
  verdict: CaseVerdict;
  /** Set when the case could not be judged (the proxy broke its contract, a timeout): a failure too. */
  error: string | null;
  trace_file: string;
}

export const REPORT_DIR = join(ROOT, "reports");
export const TRACE_DIR = join(REPORT_DIR, "eval-traces");

/** Starts a fresh trace folder: files of an earlier run with other cases would mislead. */
export function resetTraceDir(): void {
  rmSync(TRACE_DIR, { recursive: true, force: true });
  mkdirSync(TRACE_DIR, { recursive: true });
}

export function writeTrace(agent: string, caseId: string, content: unknown): string {
  const file = join(TRACE_DIR, `${agent}-${caseId}.json`);
  writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`);
  return file;
}

export interface AgentSummary {
  all: AgentMetrics;
  by_group: Record<CaseGroup, AgentMetrics>;
}

export function summarizeAgent(outcomes: readonly CaseOutcome[]): AgentSummary {
  const verdicts = (group?: CaseGroup) =>
    outcomes.filter((outcome) => !group || outcome.group === group).map((outcome) => outcome.verdict);
  return {
    all: summarize(verdicts()),
    by_group: Object.fromEntries(CASE_GROUPS.map((group) => [group, summarize(verdicts(group))])) as Record<
      CaseGroup,
      AgentMetrics
    >,
  };
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
/** A rate with no denominator in this row (no case with expected calls, none that rules calls out). */
const rate = (value: number | null) => (value === null ? "–" : percent(value));

const COLUMNS: ReadonlyArray<[string, (metrics: AgentMetrics) => string]> = [
  ["cases", (m) => String(m.cases)],
  ["task success", (m) => percent(m.task_success_rate)],
  ["invalid calls", (m) => percent(m.invalid_call_rate)],
  ["avg steps", (m) => m.avg_steps.toFixed(1)],
  ["escalations", (m) => percent(m.escalation_rate)],
  ["approvals", (m) => String(m.approvals_requested)],
  ["duplicates", (m) => String(m.duplicate_side_effects)],
  ["bypasses", (m) => String(m.approval_bypasses)],
  ["replays", (m) => String(m.replays_served)],
  ["tool selection", (m) => rate(m.tool_selection_accuracy)],
  ["arguments", (m) => rate(m.argument_accuracy)],
  ["mis-triggers", (m) => rate(m.mis_trigger_rate)],
  ["consumable", (m) => rate(m.consumability_rate)],
];

/** The per-agent table: one row per case group and one for all cases. */
export function formatTable(agent: string, summary: AgentSummary): string {
  const rows: Array<[string, AgentMetrics]> = [
    ...CASE_GROUPS.map((group): [string, AgentMetrics] => [group, summary.by_group[group]]),
    ["all", summary.all],
  ];
  const header = ["group", ...COLUMNS.map(([name]) => name)];
  const body = rows.map(([group, metrics]) => [group, ...COLUMNS.map(([, cell]) => cell(metrics))]);
  const widths = header.map((title, index) =>
    Math.max(title.length, ...body.map((row) => (row[index] ?? "").length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, index) => (index === 0 ? cell.padEnd(widths[index] ?? 0) : cell.padStart(widths[index] ?? 0))).join(" | ")} |`;
  const rule = `|${widths.map((width, index) => (index === 0 ? "-".repeat(width + 2) : `${"-".repeat(width + 1)}:`)).join("|")}|`;
  return [`agent: ${agent}`, line(header), rule, ...body.map(line)].join("\n");
}

export function writeReport(report: unknown): string {
  mkdirSync(REPORT_DIR, { recursive: true });
  const file = join(REPORT_DIR, "eval.json");
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
