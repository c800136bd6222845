/**
 * The bounds of every upstream answer, HTTP or MCP, applied before the answer is held: the bytes
 * are counted as they stream and the stream is cut at the first bound crossed, before anything is
 * parsed (`answer-meter.ts`); what was parsed is walked once more, iteratively, before it is
 * validated or shaped (`exceededIn`). Nothing past these bounds reaches JSON.parse's heap, the
 * output whitelist, the shaping stage or the run's storage, so one hostile upstream cannot make a
 * call run out of memory or stack, or store a row its storage refuses.
 *
 * The bounds are the proxy's, not a tool's: a tool's `max_result_bytes` decides what the model
 * reads inline; these decide what the proxy agrees to hold at all.
 */
export const ANSWER_BOUNDS = {
  /** Bytes of one HTTP answer; for a remote MCP tool, of all the HTTP answers of one call together. */
  bytes: 8 * 1024 * 1024,
  /** Array elements and object members, counted over the whole answer. */
  items: 100_000,
  /** Objects and arrays nested in one another, the answer itself being level 1. */
  depth: 64,
  /** One string: bytes of its JSON text on the wire, characters once parsed. */
  string: 1024 * 1024,
} as const;

export type AnswerBound = keyof typeof ANSWER_BOUNDS;

/** The bound an answer crossed, and its value. */
export interface ExceededBound {
  bound: AnswerBound;
  max: number;
}

export function exceeded(bound: AnswerBound): ExceededBound {
  return { bound, max: ANSWER_BOUNDS[bound] };
}

/**
 * The first bound a parsed answer crosses, or null: one walk with an explicit stack, so neither
 * depth nor width can overflow the call stack. An MCP tool's text blocks, joined into one string
 * after parsing, meet the string bound here.
 */
export function exceededIn(value: unknown): ExceededBound | null {
  let items = 0;
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const current = next.value;
    if (typeof current === "string") {
      if (current.length > ANSWER_BOUNDS.string) return exceeded("string");
      continue;
    }
    if (typeof current !== "object" || current === null) continue;
    if (next.depth > ANSWER_BOUNDS.depth) return exceeded("depth");
    const children = Array.isArray(current) ? current : Object.values(current);
    items += children.length;
    if (items > ANSWER_BOUNDS.items) return exceeded("items");
    for (const child of children) stack.push({ value: child, depth: next.depth + 1 });
  }
  return null;
}
