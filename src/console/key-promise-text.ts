import type { ToolSpec } from "../catalog/define-tool";
import { inDoubtRuleOf } from "../machine/in-doubt";

/** What an operator is told of a tool's upstream and the second leg of exactly-once. */
export interface KeyPromiseText {
  upstream: string;
  /** Whether it applies a key once, and on what evidence. */
  standing: string;
  /** What the proxy does with a write of this tool whose outcome is unknown. */
  in_doubt: string;
}

const day = (at: string | undefined) => at?.slice(0, 10) ?? "an earlier run";

/** Null for a built-in tool, which has no upstream. */
export function keyPromiseText(tool: ToolSpec): KeyPromiseText | null {
  const upstream = tool.upstream;
  if (!upstream) return null;
  const promise = upstream.idempotency;
  const standing = !promise
    ? "applies a key once (defined in code)"
    : promise.basis === "certified"
      ? `applies a key once: certified ${day(promise.evidence_at)}`
      : promise.basis === "refuted"
        ? `declared to apply a key once, but its certification of ${day(promise.evidence_at)} saw a second effect under one key: treated as ignoring keys`
        : promise.basis === "undecided"
          ? "not declared (it takes reads only)"
          : promise.honoured
            ? "applies a key once: declared, not certified"
            : "ignores idempotency keys (declared)";
  const rule = inDoubtRuleOf(tool);
  const in_doubt =
    tool.side_effect === "read"
      ? "a read is never in doubt"
      : rule === "resend_under_key"
        ? "a write in doubt is resent under its key"
        : rule === "settle_by_read"
          ? `a write in doubt is settled by reading ${tool.settle?.tool} before anything is sent again`
          : "a write in doubt is never resent: a human settles it";
  return { upstream: upstream.binding, standing, in_doubt };
}
