import { formatMoney } from "../core/money";
import type { DecisionContextDeclaration, FactDeclaration } from "./declaration";
import type { DecisionFact } from "./define-tool";
import { fillText, resolvePointer, valueAtPath } from "./templates";

/**
 * A declared decision context's facts: the lines an operator reads before approving, from the
 * call's arguments and a fresh read (`observed`, null when the read found nothing). Money is shown
 * in the currency the read names; a warning flags what argues against approving.
 */

type Args = Record<string, unknown>;

function plain(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** What a fact's value is: the argument, the observed value, or the observed list's count and total. */
function rawValue(fact: FactDeclaration, args: Args, observed: unknown): unknown {
  if ("arg" in fact) return resolvePointer(args, fact.arg);
  if ("path" in fact) return valueAtPath(observed, fact.path);
  const list = valueAtPath(observed, fact.list.path);
  // No list read (nothing observed) reads as an empty one: nothing is known to have happened.
  const items = Array.isArray(list) ? list : [];
  const { sum } = fact.list;
  const total =
    sum === undefined
      ? undefined
      : items.reduce<number>((acc, item) => {
          const amount = valueAtPath(item, sum);
          return acc + (typeof amount === "number" ? amount : 0);
        }, 0);
  return { count: items.length, total };
}

/** The facts function of a declared decision context. */
export function declaredFacts(context: DecisionContextDeclaration) {
  return (args: Args, observed: unknown): DecisionFact[] => {
    const named = context.money ? valueAtPath(observed, context.money.currency) : undefined;
    const currency = typeof named === "string" ? named : (context.money?.default_currency ?? "USD");
    const show = (fact: FactDeclaration, value: unknown) =>
      fact.format === "money" && typeof value === "number" ? formatMoney(value, currency) : plain(value);
    return context.facts.flatMap((fact): DecisionFact[] => {
      const value = rawValue(fact, args, observed);
      if ("list" in fact) {
        const { count, total } = value as { count: number; total: number | undefined };
        const text =
          count === 0
            ? fact.list.empty
            : total === undefined
              ? String(count)
              : `${count} · ${show(fact, total)}`;
        return [{ label: fact.label, value: text }];
      }
      if (value === undefined || value === null) {
        return fact.if_missing === "omit" ? [] : [{ label: fact.label, value: "unknown" }];
      }
      const warning = warningOf(fact.warning, value, observed, (bound) => show(fact, bound));
      return [{ label: fact.label, value: show(fact, value), ...(warning ? { warning } : {}) }];
    });
  };
}

/** A warning's text when the fact's value argues against approving. */
function warningOf(
  warning: Extract<FactDeclaration, { path: string }>["warning"],
  value: unknown,
  observed: unknown,
  show: (bound: unknown) => string,
): string | undefined {
  if (!warning) return undefined;
  if ("equals" in warning) return value === warning.equals ? fillText(warning.text, {}) : undefined;
  const bound = valueAtPath(observed, warning.above);
  if (typeof bound !== "number" || typeof value !== "number" || value <= bound) return undefined;
  return fillText(warning.text, { bound: show(bound) });
}
