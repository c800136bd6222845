/** Types of bench/stats.mjs, for the tests. */
import type { BatchFigures, Summary } from "./render.mjs";
export function percentile(sorted: number[], p: number): number;
export function summarise(samples: number[]): Summary;
export function pairedDifference(baseline: number[], measured: number[]): Summary;
export function pairOrder<T>(round: number, pair: [T, T]): [T, T];
export function roundRobin<T>(names: T[], rounds: number): { round: number; name: T }[];
export function combineRounds(rounds: { requests: number; seconds: number; cpu_ms?: number }[]): BatchFigures;
/** A V8 CPU profile, the parts `busyMs` reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string } }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}
export function busyMs(profile: CpuProfile): number;
