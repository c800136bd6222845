import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EvalCase } from "../../eval/case-types";
import { CASES } from "../../eval/cases";
import { casesFingerprint } from "../../eval/cases-fingerprint";
import { summarizeAgent } from "../../eval/report";
import { evaluationRegion, evaluationStale } from "../../scripts/readme/evaluation";

/**
 * docs/evaluation.md's figures are written from the evaluation's report by a command, and lint
 * refuses them once the cases they were measured on are not the eval's cases any more.
 */

/** A throwaway git repository holding a report of `npm run eval`, committed, with its HEAD. */
function project(report: (head: string) => Record<string, unknown>): string {
  const root = mkdtempSync(join(tmpdir(), "eval-doc-"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      cwd: root,
      encoding: "utf8",
    }).trim();
  git("init", "-q");
  writeFileSync(join(root, "README.md"), "x\n");
  git("add", "README.md");
  git("commit", "-qm", "x");
  mkdirSync(join(root, "reports"));
  writeFileSync(join(root, "reports", "eval.json"), JSON.stringify(report(git("rev-parse", "HEAD"))));
  return root;
}

const verdict = (passed: boolean, classes = {}) => ({
  passed,
  failures: [],
  calls: 2,
  invalid_calls: 0,
  replays: 0,
  approvals_requested: 0,
  duplicates: 0,
  bypasses: 0,
  escalated: false,
  charged_polls: passed ? 0 : 3,
  faults: [],
  fixture_defects: 0,
  classes,
  expected_calls: 1,
  right_tool_calls: 1,
  right_args_calls: 1,
  restraint_expected: false,
  unwanted_calls: 0,
  answers: 1,
  consumable_answers: 1,
});

function report(head: string, overrides: Record<string, unknown> = {}) {
  const results = [
    {
      agent: "naive",
      case_id: "html-refund",
      group: "adversarial",
      verdict: verdict(false, { in_doubt: { handled: false, why: "x" } }),
    },
    {
      agent: "careful",
      case_id: "html-refund",
      group: "adversarial",
      verdict: verdict(true, { in_doubt: { handled: true, why: null } }),
    },
  ];
  const of = (agent: string) => summarizeAgent(results.filter((r) => r.agent === agent) as never);
  return {
    generated_at: "2026-12-05T10:00:00.000Z",
    commit: head,
    dirty: false,
    set: "full",
    concurrency: 4,
    all_cases: true,
    cases_fingerprint: casesFingerprint(),
    duration_ms: 67_100,
    cases: CASES.length,
    agents: { naive: of("naive"), careful: of("careful") },
    results,
    ...overrides,
  };
}

describe("the evaluation's page, generated from its report", () => {
  it("writes the per-agent table, the per-class table and the failed cases, stamped with the cases' digest", () => {
    const body = evaluationRegion(project((head) => report(head)));
    expect(body.split("\n")[0]).toBe(
      `<!-- cases ${CASES.length}, fingerprint ${casesFingerprint()}: \`npm run lint\` refuses these figures once the cases differ -->`,
    );
    expect(body).toContain(`\`npm run eval\` on commit \``);
    expect(body).toContain("| agent | cases | task success |");
    expect(body).toContain("| naive | 1 | 0.0% |");
    expect(body).toContain("| careful | 1 | 100.0% |");
    expect(body).toMatch(
      /\| in_doubt \| reconciled: never resent, never claimed done \| 0 of 1 \(0\.0%\) \| 1 of 1 \(100\.0%\) \|/,
    );
    expect(body).toMatch(/\| retryable \| .* \| 0 of 0 \(–\) \| 0 of 0 \(–\) \|/);
    expect(body).toContain("- naive failed `html-refund`.");
    expect(body).toContain("- careful failed no case.");
    expect(evaluationStale(body)).toBeNull();
  });

  it("refuses a missing report, a subset of the cases, other cases and another commit", () => {
    expect(() => evaluationRegion(mkdtempSync(join(tmpdir(), "eval-doc-none-")))).toThrow(
      /run `npm run eval` first/,
    );
    expect(() => evaluationRegion(project((head) => report(head, { all_cases: false })))).toThrow(
      /not of every case/,
    );
    expect(() =>
      evaluationRegion(project((head) => report(head, { cases_fingerprint: "0123456789abcdef" }))),
    ).toThrow(/measured on other cases \(fingerprint 0123456789abcdef/);
    expect(() => evaluationRegion(project(() => report("f".repeat(40))))).toThrow(
      /on commit fffffff, not on HEAD/,
    );
  });

  it("is refused by lint once a case changes, and when it carries no digest", () => {
    const body = evaluationRegion(project((head) => report(head)));
    const changed = CASES.map((evalCase, index) =>
      index === 0 ? { ...evalCase, title: `${evalCase.title}, reworded` } : evalCase,
    ) as EvalCase[];
    expect(casesFingerprint(changed)).not.toBe(casesFingerprint());
    const stale = body.replace(casesFingerprint(), casesFingerprint(changed));
    expect(evaluationStale(stale)).toMatch(
      /its figures are of other cases .* run `npm run eval`, then `npm run readme -- --only evaluation`/,
    );
    expect(evaluationStale("| agent |\n")).toMatch(
      /^it carries no fingerprint of the cases it was measured on/,
    );
  });
});
