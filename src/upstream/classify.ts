import type { SideEffect } from "../catalog/define-tool";
import type { ExceededBound } from "../core/answer-bounds";
import type { FailureSpec } from "../wire/envelope";

/** What came back from one upstream attempt, before any interpretation. */
export type UpstreamResult =
  | { kind: "response"; status: number; contentType: string; retryAfter: string | null; body: string }
  /** The answer crossed one of `ANSWER_BOUNDS` and was cut there; `status` is null when none came. */
  | { kind: "too_large"; status: number | null; exceeded: ExceededBound }
  | { kind: "timeout" }
  | { kind: "network_error" };

export type Classification =
  | { kind: "success"; status: number; body: unknown }
  | { kind: "failure"; status: number | null; transient: boolean; failure: FailureSpec };

function failed(status: number | null, transient: boolean, failure: FailureSpec): Classification {
  return { kind: "failure", status, transient, failure };
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

function parseJson(body: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
  }
}

/** The upstream's own error code, if its body is a `{error: {code}}` object; never its message. */
function upstreamErrorCode(parsed: ReturnType<typeof parseJson>): string | null {
  if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) return null;
  const error = (parsed.value as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && /^[a-z0-9_]{1,64}$/.test(code) ? code : null;
}

/** The items a batch-style answer reports as failed (`failed_items: [{id, code}]`), ids and codes only. */
function failedItemsOf(body: unknown): { id: string; code: string | null }[] {
  if (typeof body !== "object" || body === null) return [];
  const items = (body as { failed_items?: unknown }).failed_items;
  if (!Array.isArray(items)) return [];
  return items.map((item) => {
    const record = (typeof item === "object" && item !== null ? item : {}) as {
      id?: unknown;
      code?: unknown;
    };
    const code =
      typeof record.code === "string" && /^[a-z0-9_]{1,64}$/.test(record.code) ? record.code : null;
    return { id: typeof record.id === "string" ? record.id.slice(0, 100) : "unknown", code };
  });
}

const BOUND_NAMES = {
  bytes: "bytes",
  items: "array elements and object members",
  depth: "levels of nesting",
  string: "characters in one string",
} as const;

/**
 * An answer past one of the proxy's bounds, HTTP or MCP, and whether it was cut on the wire or
 * found once parsed: not kept, not shaped, never retried (the same request would bring the same
 * answer). A read did nothing. A write's upstream answered after it ran, so whether it acted is
 * unknown, never "not done": the key stays in doubt and a read settles it.
 */
export function tooLarge(
  result: { status: number | null; exceeded: ExceededBound },
  sideEffect: SideEffect,
): FailureSpec {
  const { bound, max } = result.exceeded;
  const read = sideEffect === "read";
  return {
    code: "upstream_too_large",
    message: `The upstream's answer is larger than the proxy keeps (more than ${max} ${BOUND_NAMES[bound]}), so it was cut off and discarded. ${
      read
        ? "Calling again brings the same answer: narrow the request if the tool allows it, or hand over to a human."
        : "The upstream may have acted: do not call again; check with a read tool whether it happened."
    }`,
    side_effect_confirmed: read ? false : null,
    recommended_next_action: read ? "escalate_to_human" : "reconcile",
    details: {
      limit: bound,
      max,
      ...(result.status === null ? {} : { upstream_status: result.status }),
    },
  };
}

/**
 * The one place an upstream answer becomes an outcome. Upstream bodies are never passed through:
 * messages are ours, and only a well-formed upstream error code is kept as a detail.
 *
 * `unknownEffect` is the side-effect certainty of a failure that may have happened after the
 * upstream acted: null (unknown) for writes, false for reads which change nothing.
 */
export function classifyUpstream(
  result: UpstreamResult,
  sideEffect: SideEffect,
  now: number = Date.now(),
): Classification {
  const unknownEffect = sideEffect === "read" ? false : null;

  if (result.kind === "timeout") {
    return failed(null, true, {
      code: "timeout",
      message:
        sideEffect === "read"
          ? "The upstream did not answer within the tool's timeout; the request was cancelled. Retrying is safe."
          : "The upstream did not answer within the tool's timeout; it may or may not have acted. Call again with the same arguments: the same idempotency key is sent, so it cannot happen twice.",
      side_effect_confirmed: unknownEffect,
    });
  }
  if (result.kind === "network_error") {
    return failed(null, true, {
      code: "transient_error",
      message: "The upstream could not be reached. Retrying with the same arguments is safe.",
      side_effect_confirmed: unknownEffect,
    });
  }

  if (result.kind === "too_large") return failed(result.status, false, tooLarge(result, sideEffect));

  const { status } = result;
  // Parsed once, whatever the content type: the error code is read from any JSON body, and a success
  // is only taken from one its content type says is JSON.
  const body = parseJson(result.body);
  const code = upstreamErrorCode(body);
  const details = code ? { upstream_status: status, upstream_code: code } : { upstream_status: status };

  if (status >= 200 && status < 300) {
    const parsed = result.contentType.includes("json") ? body : { ok: false as const };
    if (!parsed.ok) {
      return failed(status, false, {
        code: "terminal_error",
        message:
          "The upstream answered success but not with JSON, so the result cannot be trusted. Check the state with a read tool before acting again.",
        side_effect_confirmed: unknownEffect,
        recommended_next_action: sideEffect === "read" ? "escalate_to_human" : "reconcile",
        details,
      });
    }
    const failedItems = failedItemsOf(parsed.value);
    if (failedItems.length > 0) {
      // A batch that half worked is not a success: the model must learn which parts failed.
      return failed(status, false, {
        code: "partial_success",
        message: `The upstream did part of the work: ${failedItems.length} item(s) failed (${failedItems
          .map((item) => item.id)
          .join(", ")}). Do not repeat the call; reconcile what is missing.`,
        side_effect_confirmed: true,
        recommended_next_action: "reconcile",
        details: { failed_items: failedItems },
      });
    }
    return { kind: "success", status, body: parsed.value };
  }
  if (status === 400 || status === 422) {
    return failed(status, false, {
      code: "validation_error",
      message: `The upstream refused the arguments${code ? ` (${code})` : ""}. Change them before calling again.`,
      side_effect_confirmed: false,
      details,
    });
  }
  if (status === 403 && code) {
    // A refusal the upstream names (the user the credential's act claim names does not own the
    // record, say): its code tells the model why, where "credentials" would mislead it.
    return failed(status, false, {
      code: "permission_error",
      message: `The upstream refused this call (${code}). This will not succeed on retry.`,
      side_effect_confirmed: false,
      details,
    });
  }
  if (status === 401 || status === 403) {
    return failed(status, false, {
      code: "permission_error",
      message: "The upstream refused this call's credentials. This will not succeed on retry.",
      side_effect_confirmed: false,
      details,
    });
  }
  if (status === 404) {
    return failed(status, false, {
      code: "not_found",
      message: "The upstream has no such record. Check the id you used.",
      side_effect_confirmed: false,
      details,
    });
  }
  // The IETF idempotency draft answers 409 while the first request with the same key still runs:
  // that is "not yet", not "conflict".
  if (status === 409 && code === "idempotency_key_in_use") {
    return failed(status, true, {
      code: "transient_error",
      message: "The same call is still being processed upstream. Call again shortly with the same arguments.",
      retry_after_ms: 1000,
      side_effect_confirmed: unknownEffect,
      details,
    });
  }
  // A send bound to a draft version that a human edited since: the approved text no longer exists.
  if (status === 409 && code === "draft_version_stale") {
    return failed(status, false, {
      code: "conflict_error",
      message:
        "The draft was edited after this version was approved, so nothing was sent. Read the draft again, and send its new version to get a new approval.",
      side_effect_confirmed: false,
      details,
    });
  }
  if (status === 409) {
    return failed(status, false, {
      code: "conflict_error",
      message:
        "The upstream reports a conflict with the current state. Read the record again before deciding.",
      side_effect_confirmed: false,
      details,
    });
  }
  if (status === 429) {
    return failed(status, true, {
      code: "rate_limited",
      message: "The upstream is rate limiting. Wait retry_after_ms, then call again with the same arguments.",
      retry_after_ms: parseRetryAfter(result.retryAfter, now) ?? 1000,
      side_effect_confirmed: false,
      details,
    });
  }
  if (status >= 500) {
    return failed(status, true, {
      code: "transient_error",
      message:
        sideEffect === "read"
          ? "The upstream failed temporarily. Retrying is safe."
          : "The upstream failed temporarily; it may or may not have acted. Call again with the same arguments: it cannot happen twice.",
      retry_after_ms: parseRetryAfter(result.retryAfter, now),
      side_effect_confirmed: unknownEffect,
      details,
    });
  }
  return failed(status, false, {
    code: "terminal_error",
    message: "The upstream answered in a way this tool does not understand. Do not retry; escalate.",
    side_effect_confirmed: unknownEffect,
    details,
  });
}
