import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performanceMarkdown } from "../../bench/render.mjs";

/**
 * The README's Performance figures, from the report `npm run bench` wrote (reports/bench.json).
 * Refuses a missing report, one without goals, and one measured on another commit than the tree's
 * HEAD: the figures must be of the code they sit beside.
 */
export function performanceRegion(root: string): string {
  const path = join(root, "reports", "bench.json");
  if (!existsSync(path)) {
    throw new Error(
      `no ${path}: run \`npm run bench\` first (it writes the report only when every phase succeeded)`,
    );
  }
  const report = JSON.parse(readFileSync(path, "utf8")) as Parameters<typeof performanceMarkdown>[0];
  if (typeof report.commit !== "string" || !Array.isArray(report.goals)) {
    throw new Error(
      `${path} has no commit or no goals: it is from an older bench; run \`npm run bench\` again`,
    );
  }
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  if (report.commit !== head) {
    throw new Error(
      `${path} was measured on commit ${report.commit.slice(0, 7)} (${report.tree}), not on HEAD ${head.slice(0, 7)}: run \`npm run bench\` on this commit`,
    );
  }
  return performanceMarkdown(report);
}
