/** Types of bench/render.mjs, for the README's generator and the tests. */
export interface GoalRow {
  name: string;
  what: string;
  value: number | null;
  bound: number | null;
  goal: string;
  meets: boolean | null;
  note: string;
}
export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}
export interface BatchFigures {
  rounds: number;
  requests: number;
  seconds: number;
  per_s: number;
  per_s_min: number;
  per_s_max: number;
  cpu_ms_per_request: number | null;
}
export interface ThroughputFigures {
  concurrency: number;
  round_seconds: number;
  rounds: number;
  batches: Record<string, BatchFigures>;
}
export interface BenchReport {
  commit: string;
  dirty: boolean;
  tree: string;
  command: string;
  measured_at: string;
  node: string;
  miniflare: string;
  storage: string;
  client_resent_requests: number;
  machine: { cpus: number; model: string | null; load_average_1m: { before: number; after: number } };
  // The figures are whatever the bench measured; the renderer reads the parts it names.
  figures: {
    latency_ms: Record<string, Summary>;
    paired_ms?: Record<string, Summary>;
    throughput: ThroughputFigures;
    [part: string]: unknown;
  };
  goals: GoalRow[];
}
export function markdownTable(header: string[], rows: string[][]): string;
export function goalsTable(goals: GoalRow[]): string;
export function latencyTable(figures: BenchReport["figures"]): string;
export function throughputTable(throughput: ThroughputFigures): string;
export function provenance(report: BenchReport): string;
export function performanceMarkdown(report: BenchReport): string;
