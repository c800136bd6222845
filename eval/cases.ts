import type { EvalCase } from "./case-types";
import { adversarial } from "./cases/adversarial";
import { discovery } from "./cases/discovery";
import { edge } from "./cases/edge";
import { noCall } from "./cases/no-call";
import { normal } from "./cases/normal";

/**
 * The evaluation's cases, in three groups (the discovery and no-call cases are normal or edge).
 * Each is a task, the scenario its run is opened with, and the outcome expected at the source (the sandbox's refunds, tickets and emails of the run).
 *
 * Tenants: acme needs a human for every refund and email; globex auto-approves refunds up to 1000
 * cents (unless the run read untrusted text). Amounts differ between cases so a trace is easy to
 * follow; the source is always filtered by the case's own run.
 */

export const CASES: readonly EvalCase[] = [...normal, ...edge, ...adversarial, ...discovery, ...noCall];
