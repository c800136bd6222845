/** One argument of a call as an operator sees it. */
export interface DisplayedArg {
  field: string;
  value: string;
}

/**
 * The arguments of a call, ready to show an operator: every page that shows arguments goes through
 * here. Today it renders them as the ledger holds them (trace arguments are already masked where
 * they were recorded). When tool definitions declare sensitive arguments, this is the one place to
 * apply the shared masker with the rules of `_tool` (unused until then), so no page can forget to.
 */
export function displayArgs(_tool: string | null, args: unknown): DisplayedArg[] {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return args === undefined || args === null ? [] : [{ field: "(arguments)", value: showValue(args) }];
  }
  return Object.entries(args).map(([field, value]) => ({ field, value: showValue(value) }));
}

function showValue(value: unknown): string {
  // Strings are shown as they are (the page escapes them); anything else as compact JSON, so nested
  // objects stay readable and null or false is shown as such rather than as an empty cell.
  return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
}
