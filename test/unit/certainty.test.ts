import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { keyHistory } from "../../src/machine/certainty";
import { completionOf } from "../../src/machine/record";
import { buildRequest } from "../../src/machine/request";
import type { CallRecord, RunMeta } from "../../src/machine/run-state";
import { settleSend } from "../../src/machine/settle";
import type { Write } from "../../src/machine/writes";
import { catalog } from "../../src/tools";
import { classifyUpstream, type UpstreamResult } from "../../src/upstream/classify";
import { type Envelope, failure, type NextAction, success } from "../../src/wire/envelope";

/**
 * "Certainty only moves up", as the admission machine settles a send (`settleSend`, which folds
 * the answer with the key's history in `certainty.ts`): every upstream status class after every
 * earlier outcome of the key. The answers come from the real `classifyUpstream`, the way the
 * dispatch stage would produce them for the product's `issue_refund`.
 */

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const KEY = "idk_certainty";
const refund = catalog.find("support", "issue_refund") as ToolSpec;
const args = { order_id: "A1001", amount_cents: 1999, reason: "out_of_stock" };

const run: RunMeta = {
  tenant: "globex",
  run_id: "run_certainty",
  namespace: "support",
  environment: "sandbox",
  catalog_version: "v1",
  limits: {
    max_calls: 50,
    max_writes: 10,
    max_destructive: 5,
    deadline_s: 600,
  } as RunMeta["limits"],
  repeat_threshold: 3,
  state: "open",
  created_at: NOW - 60_000,
  deadline_at: NOW + 600_000,
  ended_at: null,
  counters: { calls_used: 2, writes_used: 0, destructive_used: 1 },
  fence_marker: "fence",
  tainted_by: null,
};

const json = (status: number, body: unknown, retryAfter: string | null = null): UpstreamResult => ({
  kind: "response",
  status,
  contentType: "application/json",
  retryAfter,
  body: JSON.stringify(body),
});
const error = (status: number, code: string) => json(status, { error: { code, message: "refused" } });

const REFUND = { refund_id: "rf_1", order_id: "A1001", amount_cents: 1999, reason: "out_of_stock" };
const context = {
  call_id: "call_now",
  environment: "sandbox" as const,
  tool: "issue_refund",
  idempotency_key: KEY,
};

/** The envelope the dispatch stage makes of one upstream answer to a refund. */
function answerTo(result: UpstreamResult): Envelope {
  const classified = classifyUpstream(result, "destructive", NOW);
  return classified.kind === "success" ? success(context, REFUND) : failure(context, classified.failure);
}

/** A postcondition read that found no trace of the claimed refund. */
const refutedByRead = failure(context, {
  code: "silent_failure",
  message: "The payment API confirmed refund rf_1, but the order shows no such refund.",
  side_effect_confirmed: false,
  recommended_next_action: "reconcile",
});

const STATUSES: Record<string, Envelope> = {
  "201 success": answerTo(json(201, REFUND)),
  "201 cut off (unparsable)": answerTo({
    kind: "response",
    status: 201,
    contentType: "application/json",
    retryAfter: null,
    body: '{"refund_id":"rf_1","ord',
  }),
  "201 refuted by the postcondition read": refutedByRead,
  "400 validation": answerTo(error(400, "invalid_request")),
  "422 over the refundable amount": answerTo(error(422, "amount_exceeds_refundable")),
  "401 permission": answerTo(error(401, "unauthorized")),
  "403 permission": answerTo(error(403, "forbidden")),
  "404 not found": answerTo(error(404, "not_found")),
  "409 conflict": answerTo(error(409, "already_refunded")),
  "409 draft_version_stale": answerTo(error(409, "draft_version_stale")),
  "409 idempotency_key_in_use": answerTo(error(409, "idempotency_key_in_use")),
  "429 rate limited": answerTo({ ...error(429, "rate_limited"), retryAfter: "0" } as UpstreamResult),
  "500": answerTo({
    kind: "response",
    status: 500,
    contentType: "text/plain",
    retryAfter: null,
    body: "boom",
  }),
  "503": answerTo(error(503, "service_unavailable")),
  timeout: answerTo({ kind: "timeout" }),
  "connection error": answerTo({ kind: "network_error" }),
};

const stored = buildRequest(refund, args, { key: KEY, callId: "call_first" });
const record = (sends: number, envelope: Envelope | null): CallRecord => ({
  key: KEY,
  tool: "issue_refund",
  side_effect: "destructive",
  state: "sending",
  request: stored,
  envelope,
  sends,
});

/** The key's record as this send's settlement reads it (the send itself counted in `sends`). */
const EARLIER = {
  none: record(1, null),
  "in doubt (an earlier timeout)": record(2, answerTo({ kind: "timeout" })),
  "sent, then the ledger restarted": record(2, null),
  "did not act (an earlier 429)": record(2, answerTo(error(429, "rate_limited"))),
} as const;

type Earlier = keyof typeof EARLIER;
type Expected = [confirmed: boolean | null, state: "completed" | "in_doubt", next: NextAction];

const certainFalse = (next: NextAction): Record<Earlier, Expected> => ({
  none: [false, "completed", next],
  "in doubt (an earlier timeout)": [null, "in_doubt", "reconcile"],
  "sent, then the ledger restarted": [null, "in_doubt", "reconcile"],
  "did not act (an earlier 429)": [false, "completed", next],
});
const always = (expected: Expected): Record<Earlier, Expected> => ({
  none: expected,
  "in doubt (an earlier timeout)": expected,
  "sent, then the ledger restarted": expected,
  "did not act (an earlier 429)": expected,
});

/** side_effect_confirmed, the key's state and the recommended action, per status and earlier outcome. */
const TABLE: Record<keyof typeof STATUSES, Record<Earlier, Expected>> = {
  "201 success": always([true, "completed", "retry"]),
  "201 cut off (unparsable)": always([null, "in_doubt", "reconcile"]),
  "201 refuted by the postcondition read": always([false, "completed", "reconcile"]),
  "400 validation": certainFalse("fix_arguments"),
  "422 over the refundable amount": certainFalse("fix_arguments"),
  "401 permission": certainFalse("stop"),
  "403 permission": certainFalse("stop"),
  "404 not found": certainFalse("fix_arguments"),
  "409 conflict": certainFalse("reconcile"),
  "409 draft_version_stale": certainFalse("reconcile"),
  "409 idempotency_key_in_use": always([null, "in_doubt", "retry"]),
  "429 rate limited": {
    none: [false, "in_doubt", "retry"],
    "in doubt (an earlier timeout)": [null, "in_doubt", "retry"],
    "sent, then the ledger restarted": [null, "in_doubt", "retry"],
    "did not act (an earlier 429)": [false, "in_doubt", "retry"],
  },
  "500": always([null, "in_doubt", "retry"]),
  "503": always([null, "in_doubt", "retry"]),
  timeout: always([null, "in_doubt", "retry"]),
  "connection error": always([null, "in_doubt", "retry"]),
};

function settle(envelope: Envelope, earlier: CallRecord): { writes: Write[]; envelope: Envelope } {
  return settleSend({
    run,
    call_id: "call_now",
    key: KEY,
    record: earlier,
    approval: null,
    pending: [],
    admission: null,
    envelope,
    completion: completionOf(envelope, NOW),
    taint: null,
    now: NOW,
  });
}

const CASES = Object.entries(TABLE).flatMap(([status, row]) =>
  Object.entries(row).map(([earlier, expected]) => ({ status, earlier: earlier as Earlier, expected })),
);

describe("certainty only moves up: a send's answer folded with the key's earlier sends", () => {
  it.each(CASES)("$status after earlier outcome «$earlier»", ({ status, earlier, expected }) => {
    const answer = STATUSES[status];
    if (!answer) throw new Error(`no answer for ${status}`);
    const settled = settle(answer, EARLIER[earlier]);
    const [confirmed, state, next] = expected;
    const keySettle = settled.writes.find((write) => write.kind === "key_settle");
    expect(keySettle).toMatchObject({ key: KEY, state, envelope: settled.envelope });
    if (settled.envelope.outcome === "success") {
      expect(confirmed).toBe(true);
      return;
    }
    expect(settled.envelope.error?.side_effect_confirmed).toBe(confirmed);
    expect(settled.envelope.error?.recommended_next_action).toBe(next);
    // The outcome and code stay the upstream's: only what they claim of the effect is folded.
    expect(settled.envelope.outcome).toBe(answer.outcome);
    expect(settled.envelope.error?.code).toBe(answer.error?.code);
  });

  it("a key never completes as not done after a send that may have acted", () => {
    for (const { status, earlier } of CASES) {
      if (earlier === "none" || earlier === "did not act (an earlier 429)") continue;
      const answer = STATUSES[status] as Envelope;
      const settled = settle(answer, EARLIER[earlier]);
      const completedNotDone = settled.writes.some(
        (write) =>
          write.kind === "key_settle" &&
          write.state === "completed" &&
          write.envelope?.error?.side_effect_confirmed === false &&
          write.envelope.error.code !== "silent_failure",
      );
      expect(completedNotDone, `${status} after ${earlier}`).toBe(false);
    }
  });

  it("a folded answer says why its effect is unknown, and the next settlement remembers it", () => {
    const folded = settle(STATUSES["429 rate limited"] as Envelope, EARLIER["in doubt (an earlier timeout)"]);
    expect(folded.envelope.error?.details).toMatchObject({ earlier_attempt_may_have_acted: true });
    expect(folded.envelope.error?.message).toMatch(/may already have acted/);
    // The answer kept in doubt is what the next send's history is read from.
    expect(keyHistory(record(3, folded.envelope))).toBe("may_have_acted");
  });

  it("reads the key's history from its record", () => {
    expect(keyHistory(null)).toBe("first_send");
    expect(keyHistory(EARLIER.none)).toBe("first_send");
    expect(keyHistory(EARLIER["in doubt (an earlier timeout)"])).toBe("may_have_acted");
    expect(keyHistory(EARLIER["sent, then the ledger restarted"])).toBe("may_have_acted");
    expect(keyHistory(EARLIER["did not act (an earlier 429)"])).toBe("did_not_act");
  });
});
