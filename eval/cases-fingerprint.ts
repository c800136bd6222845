import { createHash } from "node:crypto";
import { canonicalJson } from "../src/core/canonical-json";
import type { EvalCase } from "./case-types";
import { CASES } from "./cases";

/**
 * One short digest of every case as written (ids, tasks, scenarios, expectations, classes): what a
 * report and the figures written from it were measured on. docs/evaluation.md carries the digest
 * of its figures, and `npm run lint` refuses them once the cases say something else.
 */
export function casesFingerprint(cases: readonly EvalCase[] = CASES): string {
  return createHash("sha256").update(canonicalJson(cases)).digest("hex").slice(0, 16);
}
