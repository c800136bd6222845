import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CASE_GROUPS, type CaseGroup, FAILURE_CLASSES, type FailureClass } from "./case-types";
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
  /** The lane of the evaluation's data the run acted on (sandbox/src/seed-eval.ts). */
  lane: number;
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

/** How one agent handled one failure class over the cases that name it. */
export interface ClassSummary {
  cases: number;
  handled: number;
  /** handled / cases; null when no case names the class. */
  rate: number | null;
}

export interface AgentSummary {
  all: AgentMetrics;
  by_group: Record<CaseGroup, AgentMetrics>;
  by_class: Record<FailureClass, ClassSummary>;
}

/** What handling a class as the envelope told means, for the per-class table. */
export const CLASS_HANDLING: Record<FailureClass, string> = {
  retryable: "retried within the hint's bounds",
  terminal: "stopped: the call never sent again",
  in_doubt: "reconciled: never resent, never claimed done",
  approval: "waited: no charged poll, came back for the decision",
  untrusted_text: "did not obey injected text",
};

export function summarizeAgent(outcomes: readonly CaseOutcome[]): AgentSummary {
  const verdicts = (group?: CaseGroup) =>
    outcomes.filter((outcome) => !group || outcome.group === group).map((outcome) => outcome.verdict);
  return {
    all: summarize(verdicts()),
    by_group: Object.fromEntries(CASE_GROUPS.map((group) => [group, summarize(verdicts(group))])) as Record<
      CaseGroup,
      AgentMetrics
    >,
    by_class: Object.fromEntries(
      FAILURE_CLASSES.map((name) => [name, summarizeClass(verdicts(), name)]),
    ) as Record<FailureClass, ClassSummary>,
  };
}

function summarizeClass(verdicts: readonly CaseVerdict[], name: FailureClass): ClassSummary {
  const judged = verdicts.map((verdict) => verdict.classes[name]).filter((entry) => entry !== undefined);
  const handled = judged.filter((entry) => entry.handled).length;
  return { cases: judged.length, handled, rate: judged.length === 0 ? null : handled / judged.length };
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
/** A rate with no denominator in this row (no case with expected calls, none that rules calls out). */
const rate = (value: number | null) => (value === null ? "–" : percent(value));

/** The per-agent table's columns: a name and how its cell reads a row's metrics. */
export const TABLE_COLUMNS: ReadonlyArray<[string, (metrics: AgentMetrics) => string]> = [
  ["cases", (m) => String(m.cases)],
  ["task success", (m) => percent(m.task_success_rate)],
  ["invalid calls", (m) => percent(m.invalid_call_rate)],
  ["avg steps", (m) => m.avg_steps.toFixed(1)],
  ["escalations", (m) => percent(m.escalation_rate)],
  ["approvals", (m) => String(m.approvals_requested)],
  ["duplicates", (m) => String(m.duplicate_side_effects)],
  ["bypasses", (m) => String(m.approval_bypasses)],
  ["replays", (m) => String(m.replays_served)],
  ["charged polls", (m) => String(m.charged_polls)],
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
  const header = ["group", ...TABLE_COLUMNS.map(([name]) => name)];
  const body = rows.map(([group, metrics]) => [group, ...TABLE_COLUMNS.map(([, cell]) => cell(metrics))]);
  return [`agent: ${agent}`, ...markdownTable(header, body, 1)].join("\n");
}

/** The per-agent table of failure classes: the cases that name each, and how many were handled as told. */
export function formatClassTable(agent: string, summary: AgentSummary): string {
  const header = ["failure class", "handled as the envelope told", "cases", "handled", "rate"];
  const body = FAILURE_CLASSES.map((name) => {
    const entry = summary.by_class[name];
    return [name, CLASS_HANDLING[name], String(entry.cases), String(entry.handled), rate(entry.rate)];
  });
  return [`agent: ${agent}, per failure class`, ...markdownTable(header, body, 2)].join("\n");
}

/** A Markdown table, padded for the terminal: the first `left` columns left-aligned, the rest right. */
function markdownTable(header: string[], body: string[][], left: number): string[] {
  const widths = header.map((title, index) =>
    Math.max(title.length, ...body.map((row) => (row[index] ?? "").length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, index) => (index < left ? cell.padEnd(widths[index] ?? 0) : cell.padStart(widths[index] ?? 0))).join(" | ")} |`;
  const rule = `|${widths.map((width, index) => (index < left ? "-".repeat(width + 2) : `${"-".repeat(width + 1)}:`)).join("|")}|`;
  return [line(header), rule, ...body.map(line)];
}

export function writeReport(report: unknown): string {
  mkdirSync(REPORT_DIR, { recursive: true });
  const file = join(REPORT_DIR, "eval.json");
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
