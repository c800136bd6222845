// The benchmark's results: printed as Markdown tables, and written to reports/bench.json only
// when the whole run succeeded, atomically, so no step ever reads a half-written or stale report.
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../scripts/local-stack.mjs";
import { cpuTable, goalsTable, latencyTable, profileTables, provenance, throughputTable } from "./render.mjs";

/** Where `npm run bench` writes its report, and the README's generator reads it. */
export const REPORT_PATH = join(root, "reports", "bench.json");

/** Prints the report's figures and goals. */
export function printReport(report) {
  const { figures } = report;
  console.log(`\n${provenance(report)}\n`);
  console.log(`${latencyTable(figures)}\n`);
  console.log(`${throughputTable(figures.throughput)}\n`);
  if (figures.cpu_c1) console.log(`${cpuTable(figures.cpu_c1)}\n`);
  console.log(`${goalsTable(report.goals)}\n`);
  if (figures.profile) printProfile(figures.profile);
}

/** Prints each profiled stage's heaviest functions. */
export function printProfile(profile) {
  console.log(`${profileTables(profile)}\n`);
}

/** Removes a report left by an earlier run, so a run that fails leaves none behind. */
export function removeReport() {
  if (existsSync(REPORT_PATH)) rmSync(REPORT_PATH);
}

/** Writes reports/bench.json through a temporary file and a rename; returns its path. */
export function writeReport(report) {
  mkdirSync(join(root, "reports"), { recursive: true });
  const temporary = `${REPORT_PATH}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(temporary, REPORT_PATH);
  return REPORT_PATH;
}
