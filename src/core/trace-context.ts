/**
 * W3C Trace Context (`traceparent`, https://www.w3.org/TR/trace-context/): the caller's trace a
 * call joins, and the header the proxy sends upstream so the upstream's spans join it too.
 *
 * `version-traceid-parentid-flags`, lowercase hex: version 2 digits (never `ff`), trace id 32 and
 * parent id 16 (neither all zeros), flags 2. A version above `00` may carry more fields after a dash,
 * which are ignored. Anything else is not a traceparent: it is ignored and the call starts a new
 * trace, as the specification says; it is never an error.
 */
export interface TraceParent {
  trace_id: string;
  /** The caller's span: the parent of the call's span. */
  parent_id: string;
  /** The trace flags, two hex digits (`01` = sampled). */
  flags: string;
}

const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const LATER_VERSION = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ZEROS = /^0+$/;
/** A header longer than this is not a traceparent any version defines so far; it is not parsed. */
const MAX_TRACEPARENT_LENGTH = 512;

/** The caller's trace context, or null when the header is absent or malformed. */
export function parseTraceparent(header: string | null | undefined): TraceParent | null {
  if (typeof header !== "string" || header.length > MAX_TRACEPARENT_LENGTH) return null;
  const value = header.trim();
  const exact = VERSION_00.exec(value);
  const later = exact ? null : LATER_VERSION.exec(value);
  if (later && (later[1] === "00" || later[1] === "ff")) return null;
  const [traceId, parentId, flags] = exact ? exact.slice(1) : later ? later.slice(2) : [];
  if (!traceId || !parentId || !flags || ZEROS.test(traceId) || ZEROS.test(parentId)) return null;
  return { trace_id: traceId, parent_id: parentId, flags };
}

/** The `traceparent` header of a request made as span `spanId` of trace `traceId` (version 00). */
export function formatTraceparent(traceId: string, spanId: string, flags: string): string {
  return `00-${traceId}-${spanId}-${flags}`;
}

/** FNV-1a's 64-bit offset basis and prime (2^40 + 0x1b3), the hash kept as two 32-bit halves. */
const FNV_BASIS_HI = 0xcbf29ce4;
const FNV_BASIS_LO = 0x84222325;
const FNV_PRIME_LO = 0x1b3;
const TWO_32 = 2 ** 32;

const hex32 = (word: number) => word.toString(16).padStart(8, "0");

/**
 * Deterministic lowercase hex ids from the run and call ids, so re-exports of a trace line up:
 * 64-bit FNV-1a over `salt:text`, salted until long enough. In 32-bit halves (every product exact
 * in a double), the same digits as the hash computed in BigInt, without an allocation per character.
 */
export function hexId(text: string, length: number): string {
  let hi = FNV_BASIS_HI;
  let lo = FNV_BASIS_LO;
  let out = "";
  let salt = 0;
  while (out.length < length) {
    const salted = `${salt}:${text}`;
    // By index rather than `for…of`, whose iterator allocates a string per character on every call.
    for (let index = 0; index < salted.length; index++) {
      const point = salted.codePointAt(index) ?? 0;
      // A pair of surrogates is one code point, hashed once.
      if (point > 0xffff) index++;
      // A code point is below 2^21: the XOR touches the low half only.
      lo = (lo ^ point) >>> 0;
      // hash * (2^40 + 0x1b3) mod 2^64: lo * 0x1b3 carries into hi; hash << 40 adds lo << 8 to hi.
      const low = lo * FNV_PRIME_LO;
      const carry = Math.floor(low / TWO_32);
      hi = (Math.imul(hi, FNV_PRIME_LO) + carry + (lo << 8)) >>> 0;
      lo = low >>> 0;
    }
    out += hex32(hi) + hex32(lo);
    salt++;
  }
  return out.slice(0, length);
}

/** The run's own trace id: the trace of every call that came without a traceparent. */
export const runTraceId = (runId: string) => hexId(runId, 32);

/** The span id of a call's `execute_tool` span: new for every call, and the parent of its upstream requests. */
export const callSpanId = (callId: string) => hexId(callId, 16);

/** Sampled: a call without a caller's trace is kept in the run's trace export. */
const SAMPLED = "01";

/**
 * The `traceparent` the proxy sends upstream for a call: the caller's trace id and flags when it
 * sent one, else the run's trace; the span is always the call's own, so the upstream's spans are
 * children of the proxy's span for the call.
 */
export function upstreamTraceparent(runId: string, callId: string, caller: TraceParent | null): string {
  return formatTraceparent(
    caller?.trace_id ?? runTraceId(runId),
    callSpanId(callId),
    caller?.flags ?? SAMPLED,
  );
}
