import type { SettleDeclaration } from "./declaration";
import type { SettleRead, SettleVerdict } from "./define-tool";
import { fillTemplate, resolvePointer, valueAtPath } from "./templates";

type Args = Record<string, unknown>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * A declared `settle` as the dispatch runs it: the read's arguments from the call's, and the
 * verdict on its answer. The call's effect is the one item whose every `match` field holds the
 * call's value (and, with `since`, that was made at or after the call's first attempt). Exactly one
 * is found; none is absent; anything else is unclear, and a human settles it.
 */
export function settleReadOf(declared: SettleDeclaration): SettleRead {
  return {
    tool: declared.tool,
    args: (args) => fillTemplate(declared.args, args) as Args,
    judge: (args, observed, firstSentAt) => judge(declared, args, observed, firstSentAt),
  };
}

function judge(
  declared: SettleDeclaration,
  args: Args,
  observed: unknown,
  firstSentAt: number,
): SettleVerdict {
  const items = valueAtPath(observed, declared.items);
  if (!Array.isArray(items)) {
    return { kind: "unclear", why: `the read's ${declared.items} is not a list` };
  }
  const wanted = Object.entries(declared.match).map(
    ([field, value]) => [field, "arg" in value ? resolvePointer(args, value.arg) : value.value] as const,
  );
  const matching = items.filter((item) =>
    wanted.every(([field, want]) => same(valueAtPath(item, field), want)),
  );
  const mine = declared.since
    ? matching.filter((item) => madeSince(item, declared.since ?? "", firstSentAt))
    : matching;
  if (mine.length === 0) return { kind: "absent" };
  if (mine.length > 1) {
    return { kind: "unclear", why: `${mine.length} items of ${declared.items} match this call` };
  }
  const id = valueAtPath(mine[0], declared.effect_id);
  if (typeof id !== "string" && typeof id !== "number") {
    return { kind: "unclear", why: `the matching item has no ${declared.effect_id}` };
  }
  return { kind: "found", effect_id: String(id) };
}

/**
 * Whether an item was made at or after the first attempt. A time the upstream cannot be trusted to
 * have kept (absent, unparsable) counts as made since: the item then cannot be ruled out, and two
 * candidates make the verdict unclear rather than wrong. Clocks differ by a little: a second's grace.
 */
function madeSince(item: unknown, path: string, firstSentAt: number): boolean {
  const at = Date.parse(String(valueAtPath(item, path)));
  return Number.isNaN(at) || at >= firstSentAt - CLOCK_GRACE_MS;
}

const CLOCK_GRACE_MS = 1_000;
