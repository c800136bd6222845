import type { ToolSpec } from "../catalog/define-tool";
import { newResultHandle } from "../core/ids";
import { externalId } from "../effects/known-effect";
import type { ResultSummary } from "../shaping/cap";
import { capResult } from "../shaping/cap";
import { fenceText, fenceUntrusted } from "../shaping/fence";
import { applyMasks } from "../shaping/mask";
import type { FailureSpec } from "../wire/envelope";
import type { AttemptRecord } from "../wire/trace-entry";
import type { Execution } from "./request";
import type { Taint } from "./run-state";
import { problemFields, validateArguments } from "./validate";

/** A storage write the shaping stage needs, committed with the rest of the call. */
export type Recorder = () => void;

export interface ShapedResult {
  data: unknown;
  observed: Record<string, unknown> | null;
  failure: FailureSpec | null;
  attempts: AttemptRecord[];
  /** Set when this result brought third-party text into a run that had none. */
  taint: Taint | null;
  record: Recorder;
}

/**
 * What shaping keeps in the run's storage: pages of a large result, and the newest version seen of
 * each resource. Shaping owns the interface; the ledger's `ResultStore` implements it, so this pure
 * stage never reaches storage itself.
 */
export interface ResultKeeper {
  savePages(handle: string, tool: string, summary: ResultSummary, pages: readonly string[]): void;
  /**
   * How a version compares with the newest seen (decided now, so two reads in flight agree), and
   * its write, committed with the call; null when nothing needs writing.
   */
  observeVersion(
    resource: string,
    version: number,
    now: number,
  ): { stale: boolean; newest_seen: number | null; record: Recorder | null };
}

/** What shaping needs of the run's ledger, and nothing more. */
export interface ShapeContext {
  callId: string;
  fenceMarker: string;
  alreadyTainted: boolean;
  results: ResultKeeper;
  /** A tool of the run's namespace by name (the postcondition's read). */
  findTool: (name: string) => ToolSpec | undefined;
  /** One upstream call of a read, with this run's credential: the postcondition's observation. */
  observe: (tool: ToolSpec, args: Record<string, unknown>) => Promise<Execution>;
}

/**
 * Stage "shape" of a claimed success: the postcondition read, masking, fencing, staleness and the
 * size cap. Storage writes (taint, versions, pages) are returned as `record`, so
 * the ledger commits them in the same transaction as the call's key and trace entry.
 */
export async function shapeResult(
  ctx: ShapeContext,
  tool: ToolSpec,
  args: Record<string, unknown>,
  claimed: unknown,
): Promise<ShapedResult> {
  const writes: Recorder[] = [];
  const observed: Record<string, unknown> = {};
  const attempts: AttemptRecord[] = [];
  let verdictFailure: FailureSpec | null = null;
  let fencedAny = false;
  const taintTexts: string[] = [];

  const forModel = (target: ToolSpec, data: unknown) => {
    const fenced = fenceUntrusted(applyMasks(data, target.sensitive), target.untrusted, ctx.fenceMarker);
    fencedAny ||= fenced.fenced;
    // One by one: spread into push, a list of many fenced texts would overflow the call stack.
    for (const text of fenced.texts) taintTexts.push(text);
    return fenced.value;
  };
  const checkFreshness = (target: ToolSpec, data: unknown) => {
    if (!target.freshness) return;
    const resource = target.freshness.resource(data);
    const version = target.freshness.version(data);
    // Decided now against the newest seen, so two reads in flight agree; written with the call.
    const verdict = ctx.results.observeVersion(resource, version, Date.now());
    if (verdict.record) writes.push(verdict.record);
    if (verdict.stale) observed.stale = true;
    observed.freshness = { resource, version, newest_seen: verdict.newest_seen, stale: verdict.stale };
  };

  const observer = tool.observe ? ctx.findTool(tool.observe.tool) : undefined;
  // The read's arguments come from the call and the upstream's answer, so they are checked as an
  // agent's call of the read tool would be: an answer naming its new thing "" or ".." must not make
  // the check read another resource, and take that one's 404 for the effect's absence. Only the
  // fields are named: the values are the upstream's, not text to pass on unfenced.
  const built =
    tool.observe && observer ? validateArguments(observer.input, tool.observe.args(args, claimed)) : null;
  if (observer && built && !built.ok) {
    observed.postcondition = {
      tool: observer.name,
      verified: null,
      error: "validation_error",
      fields: problemFields(built.problems),
    };
  }
  if (tool.observe && observer && built?.ok) {
    const observation = await ctx.observe(observer, built.args);
    // The read checks the effect; it is not another attempt at it, and the trace says so.
    attempts.push(...observation.attempts.map((attempt) => ({ ...attempt, purpose: "check" as const })));
    // A read answering "no such thing" has observed something: that the claimed effect is absent.
    const absent = !observation.ok && observation.failure.code === "not_found";
    if (observation.ok || absent) {
      const seen = observation.ok ? observation.data : null;
      const verdict = tool.observe.verify(args, claimed, seen);
      if (observation.ok) checkFreshness(observer, seen);
      observed.postcondition = {
        tool: observer.name,
        verified: verdict.ok,
        observed: seen === null ? null : forModel(observer, seen),
      };
      if (!verdict.ok) {
        verdictFailure = {
          code: verdict.code,
          message: `${verdict.message} Do not retry: reconcile the state with a read or a human first.`,
          side_effect_confirmed: verdict.side_effect_confirmed ?? verdict.code === "partial_success",
          recommended_next_action: "reconcile",
          external_id: externalId(claimed),
        };
      }
    } else {
      observed.postcondition = { tool: observer.name, verified: null, error: observation.failure.code };
    }
  }

  checkFreshness(tool, claimed);
  let data = forModel(tool, claimed);
  const capped = capResult(data, tool.max_result_bytes);
  if (capped.kind === "paged") {
    const handle = newResultHandle();
    writes.push(() => ctx.results.savePages(handle, tool.name, capped.summary, capped.pages));
    data = {
      handle,
      summary: capped.summary,
      partial: capped.skeleton,
      next_step: `The result is too large to return at once. Call read_result_page with {"handle": "${handle}", "cursor": 0} and follow next_cursor, or GET /v1/runs/{run_id}/results/${handle}.`,
    };
  }
  const taint: Taint | null =
    fencedAny && !ctx.alreadyTainted
      ? {
          call_id: ctx.callId,
          tool: tool.name,
          at: new Date().toISOString(),
          ...(taintTexts.length === 0 ? {} : { text: taintText(taintTexts, ctx.fenceMarker) }),
        }
      : null;
  return {
    data,
    observed: Object.keys(observed).length > 0 ? observed : null,
    failure: verdictFailure,
    attempts,
    taint,
    record: () => {
      for (const write of writes) write();
    },
  };
}

/**
 * The tainting text kept with the taint for the approval page: the texts the call fenced (masked,
 * normalised, look-alikes neutralised), longest first since that is where instructions hide, inside
 * one fence with the run's marker, cut to at most this many characters.
 */
export const MAX_TAINT_TEXT = 500;

function taintText(texts: readonly string[], marker: string): string {
  const longestFirst = [...texts].sort((a, b) => b.length - a.length);
  // Only what can show is fenced: the fence is cut to MAX_TAINT_TEXT anyway, and fencing a result's
  // every text joined would cost memory in proportion to the whole answer.
  let joined = "";
  for (const text of longestFirst) {
    joined += joined === "" ? text : `\n${text}`;
    if (joined.length > MAX_TAINT_TEXT * 2) break;
  }
  const text = fenceText(joined.slice(0, MAX_TAINT_TEXT * 2), marker);
  return text.length <= MAX_TAINT_TEXT ? text : `${text.slice(0, MAX_TAINT_TEXT - 1)}…`;
}
