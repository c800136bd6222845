/** Types of bench/goals.mjs, for the tests. */
import type { GoalRow } from "./render.mjs";

// Figures are the bench's nested JSON; each goal reads the parts it names and is null without them.
type Figures = Record<string, unknown>;
export interface Goal {
  name: string;
  what: string;
  value: (figures: Figures) => number | null | undefined;
  bound: (figures: Figures) => number | null;
  side: "max" | "min" | "below";
  goal: (bound: number, figures: Figures) => string;
  note?: (figures: Figures) => string;
}
export const GOALS: Goal[];
export function evaluateGoals(figures: Figures, goals?: Goal[]): GoalRow[];
