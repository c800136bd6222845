import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FAILURE_CLASSES } from "../../eval/case-types";
import { casesFingerprint } from "../../eval/cases-fingerprint";
import { type AgentSummary, type CaseOutcome, CLASS_HANDLING, TABLE_COLUMNS } from "../../eval/report";

/**
 * docs/evaluation.md's figures, from the report `npm run eval` wrote (reports/eval.json): the
 * table per agent, the table per failure class, and the cases each agent failed. Refuses a missing
 * report, one of a subset of the cases, one measured on other cases than the eval's own now, and
 * one measured on another commit than HEAD. The region opens with the digest of the cases it was
 * measured on; `npm run lint` compares that digest with the cases (`evaluationStale`).
 */

interface EvalReport {
  generated_at: string;
  commit?: string;
  dirty?: boolean;
  set: string;
  concurrency?: number;
  all_cases?: boolean;
  cases_fingerprint?: string;
  duration_ms: number;
  cases: number;
  agents: Record<string, AgentSummary>;
  results: CaseOutcome[];
}

/** The first line of the region: what the figures were measured on, read back by the check. */
const STAMP = /^<!-- cases (\d+), fingerprint ([0-9a-f]{16}):/;

const percent = (value: number | null) => (value === null ? "–" : `${(value * 100).toFixed(1)}%`);

export function evaluationRegion(root: string): string {
  const path = join(root, "reports", "eval.json");
  if (!existsSync(path)) throw new Error(`no ${path}: run \`npm run eval\` first`);
  const report = JSON.parse(readFileSync(path, "utf8")) as EvalReport;
  if (report.all_cases !== true || report.cases_fingerprint === undefined || report.commit === undefined) {
    throw new Error(
      `${path} is not of every case (or is from an older eval): run \`npm run eval\` without --only or --quick`,
    );
  }
  const now = casesFingerprint();
  if (report.cases_fingerprint !== now) {
    throw new Error(
      `${path} was measured on other cases (fingerprint ${report.cases_fingerprint}, the cases are ${now} now): run \`npm run eval\` again`,
    );
  }
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  if (report.commit !== head) {
    throw new Error(
      `${path} was measured on commit ${report.commit.slice(0, 7)}, not on HEAD ${head.slice(0, 7)}: run \`npm run eval\` on this commit`,
    );
  }
  return renderEvaluation(report);
}

/** Null when the region's figures are of the eval's cases as they are; else why not. */
export function evaluationStale(regionBody: string): string | null {
  const stamp = STAMP.exec(regionBody);
  if (!stamp) {
    return "it carries no fingerprint of the cases it was measured on: run `npm run eval`, then `npm run readme -- --only evaluation`";
  }
  const now = casesFingerprint();
  if (stamp[2] !== now) {
    return `its figures are of other cases (fingerprint ${stamp[2]}; the cases are ${now} now): run \`npm run eval\`, then \`npm run readme -- --only evaluation\``;
  }
  return null;
}

function renderEvaluation(report: EvalReport): string {
  const agents = Object.keys(report.agents);
  const command = report.set.startsWith("ci") ? "npm run eval -- --ci" : "npm run eval";
  const lines = [
    `<!-- cases ${report.cases}, fingerprint ${report.cases_fingerprint}: \`npm run lint\` refuses these figures once the cases differ -->`,
    `\`${command}\` on commit \`${report.commit?.slice(0, 7)}\`${report.dirty ? " (with uncommitted changes)" : ""}, ${report.generated_at.slice(0, 10)}: ${report.cases} cases × ${agents.length} agents, ${report.concurrency ?? "?"} at a time, ${(report.duration_ms / 1000).toFixed(1)} s.`,
    "",
    table(
      ["agent", ...TABLE_COLUMNS.map(([name]) => name)],
      agents.map((agent) => [
        agent,
        ...TABLE_COLUMNS.map(([, cell]) => cell((report.agents[agent] as AgentSummary).all)),
      ]),
    ),
    "",
    "Per failure class, over the cases that name it: in how many the agent handled it as the envelope told.",
    "",
    table(
      ["failure class", "handled as the envelope told", ...agents],
      FAILURE_CLASSES.map((name) => [
        name,
        CLASS_HANDLING[name],
        ...agents.map((agent) => {
          const entry = (report.agents[agent] as AgentSummary).by_class[name];
          return `${entry.handled} of ${entry.cases} (${percent(entry.rate)})`;
        }),
      ]),
      2,
    ),
    "",
    ...agents.map((agent) => {
      const failed = report.results.filter((result) => result.agent === agent && !result.verdict.passed);
      return `- ${agent} failed ${failed.length === 0 ? "no case" : failed.map((result) => `\`${result.case_id}\``).join(", ")}.`;
    }),
  ];
  return `${lines.join("\n")}\n`;
}

/** A Markdown table: the first `left` columns left-aligned, the figures right-aligned. */
function table(header: string[], rows: string[][], left = 1): string {
  return [
    `| ${header.join(" | ")} |`,
    `| ${header.map((_, index) => (index < left ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.join(" | ")} |`),
  ].join("\n");
}
