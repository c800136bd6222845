import type { EffectValue } from "../catalog/effect-identity";
import { formatMoney } from "../core/money";

/** One argument of a call as an operator sees it. */
export interface DisplayedArg {
  field: string;
  value: string;
  /** The value as the call carries it, when `value` reads differently (money: "700" shown as "$7.00"). */
  exact?: string;
}

/** The money field of a tool: its declared value (`value: {field, currency}` in the catalog). */
export type MoneyField = Pick<EffectValue, "field" | "currency">;

/**
 * How the arguments of each tool read, by tool name: the money fields the tools declare. Built by
 * the page from the catalog (tool-values.ts), so every view formats the same field the same way.
 */
export type ToolValues = ReadonlyMap<string, MoneyField>;

/**
 * The arguments of a call, ready to show an operator: every page that shows arguments goes through
 * here. The tool's declared value field reads as money in its currency ("$7.00", its minor units
 * kept as `exact`); everything else as the ledger holds it (trace arguments are already masked
 * where they were recorded). When tool definitions declare sensitive arguments, this is the one
 * place to apply the shared masker with the rules of `tool`, so no page can forget to.
 */
export function displayArgs(tool: string | null, args: unknown, values: ToolValues): DisplayedArg[] {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return args === undefined || args === null ? [] : [{ field: "(arguments)", value: showValue(args) }];
  }
  const money = tool === null ? undefined : values.get(tool);
  return Object.entries(args).map(([field, value]) =>
    money?.field === field && Number.isSafeInteger(value)
      ? { field, value: formatMoney(value as number, money.currency), exact: String(value) }
      : { field, value: showValue(value) },
  );
}

function showValue(value: unknown): string {
  // Strings are shown as they are (the page escapes them); anything else as compact JSON, so nested
  // objects stay readable and null or false is shown as such rather than as an empty cell.
  return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
}
