import { ANSWER_BOUNDS, type ExceededBound, exceeded } from "./answer-bounds";
import { readBody } from "./read-body";

/**
 * Counts an upstream answer against `ANSWER_BOUNDS` as its bytes arrive, so a hostile answer is cut
 * at the first bound it crosses instead of being buffered, parsed and then found too large. JSON is
 * scanned byte by byte (strings, nesting, members); a Server-Sent Events stream has the JSON of
 * each `data:` line scanned the same way; any other body counts bytes only.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COLON = 0x3a;
const SPACE = 0x20;
const LF = 0x0a;
const CR = 0x0d;
const TAB = 0x09;

/** JSON text, scanned for strings, nesting and members without building a value. */
class JsonScan {
  #depth = 0;
  #items = 0;
  #inString = false;
  #escaped = false;
  #stringBytes = 0;
  /** Just after `[` or `{`: the next token is the container's first member, or its end. */
  #opened = false;

  byte(b: number): ExceededBound | null {
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (b === BACKSLASH) this.#escaped = true;
      else if (b === QUOTE) {
        this.#inString = false;
        return null;
      }
      return ++this.#stringBytes > ANSWER_BOUNDS.string ? exceeded("string") : null;
    }
    if (b === SPACE || b === LF || b === CR || b === TAB) return null;
    if (this.#opened) {
      this.#opened = false;
      if (b !== CLOSE_ARRAY && b !== CLOSE_OBJECT && ++this.#items > ANSWER_BOUNDS.items) {
        return exceeded("items");
      }
    }
    switch (b) {
      case QUOTE:
        this.#inString = true;
        this.#stringBytes = 0;
        return null;
      case OPEN_ARRAY:
      case OPEN_OBJECT:
        this.#opened = true;
        return ++this.#depth > ANSWER_BOUNDS.depth ? exceeded("depth") : null;
      case CLOSE_ARRAY:
      case CLOSE_OBJECT:
        this.#depth = Math.max(0, this.#depth - 1);
        return null;
      case COMMA:
        return this.#depth > 0 && ++this.#items > ANSWER_BOUNDS.items ? exceeded("items") : null;
      default:
        return null;
    }
  }
}

/** The `data:` lines of an event stream go to the JSON scan; field names, comments and other fields do not. */
class EventStreamScan {
  readonly #json = new JsonScan();
  #mode: "field" | "data_start" | "data" | "skip" = "field";
  #field = "";

  byte(b: number): ExceededBound | null {
    if (b === LF || b === CR) {
      const wasData = this.#mode === "data" || this.#mode === "data_start";
      this.#mode = "field";
      this.#field = "";
      // Lines of one event's data join with a newline: whitespace to JSON.
      return wasData ? this.#json.byte(LF) : null;
    }
    switch (this.#mode) {
      case "field":
        if (b === COLON) this.#mode = this.#field === "data" ? "data_start" : "skip";
        else if (this.#field.length < 8) this.#field += String.fromCharCode(b);
        else this.#mode = "skip";
        return null;
      case "data_start":
        this.#mode = "data";
        return b === SPACE ? null : this.#json.byte(b);
      case "data":
        return this.#json.byte(b);
      case "skip":
        return null;
    }
  }
}

/** Bytes counted so far: one per answer, or one shared by the several answers of one MCP call. */
export interface ByteTally {
  bytes: number;
}

/**
 * Below this many bytes an answer is not scanned as it streams: so little JSON cannot hold more
 * members than the items bound (two bytes at least each) or a string past its bound, and a deep one
 * parses without recursion and meets the depth bound in `exceededIn` after. Most answers are this
 * small, and the byte scan would cost them twice what parsing them does.
 */
export const UNSCANNED_BYTES = 64 * 1024;

/** The answer's meter, by its content type. */
export class AnswerMeter {
  readonly #tally: ByteTally;
  readonly #scan: JsonScan | EventStreamScan | null;
  /** This answer's own bytes so far, and the chunks not scanned yet while they are few. */
  #bytes = 0;
  #unscanned: Uint8Array[] = [];

  constructor(contentType: string, tally: ByteTally = { bytes: 0 }) {
    this.#tally = tally;
    const type = contentType.toLowerCase();
    this.#scan = type.includes("text/event-stream")
      ? new EventStreamScan()
      : type.includes("json")
        ? new JsonScan()
        : null;
  }

  /** Counts a chunk; the first bound it crosses, or null. */
  feed(chunk: Uint8Array): ExceededBound | null {
    this.#tally.bytes += chunk.byteLength;
    if (this.#tally.bytes > ANSWER_BOUNDS.bytes) return exceeded("bytes");
    const scan = this.#scan;
    if (!scan) return null;
    this.#bytes += chunk.byteLength;
    if (this.#bytes <= UNSCANNED_BYTES) {
      this.#unscanned.push(chunk);
      return null;
    }
    const pending = this.#unscanned;
    this.#unscanned = [];
    for (const earlier of pending) {
      const crossed = scanned(scan, earlier);
      if (crossed) return crossed;
    }
    return scanned(scan, chunk);
  }

  /** Counts bytes a declared length says are coming, before any arrives. */
  announced(length: number): ExceededBound | null {
    return this.#tally.bytes + length > ANSWER_BOUNDS.bytes ? exceeded("bytes") : null;
  }
}

function scanned(scan: JsonScan | EventStreamScan, chunk: Uint8Array): ExceededBound | null {
  for (const b of chunk) {
    const crossed = scan.byte(b);
    if (crossed) return crossed;
  }
  return null;
}

/** One decoder for every body: `decode` without `stream` keeps no state between calls. */
const utf8 = new TextDecoder();

/**
 * A body read whole within the bounds, as text; or the bound it crossed, at which point the rest
 * is cancelled unread, which closes the connection to the upstream.
 */
export async function readBounded(
  response: Response,
): Promise<{ ok: true; text: string } | { ok: false; exceeded: ExceededBound }> {
  const meter = new AnswerMeter(response.headers.get("content-type") ?? "");
  const early = meter.announced(Number(response.headers.get("content-length") ?? "0") || 0);
  if (early) {
    await response.body?.cancel();
    return { ok: false, exceeded: early };
  }
  const read = await readBody(response, (chunk) => meter.feed(chunk));
  return read.ok ? { ok: true, text: utf8.decode(read.body) } : { ok: false, exceeded: read.refused };
}

/**
 * The same response with a body that is counted by `meter` as its reader pulls it: past a bound
 * the upstream's body is cancelled, `onExceeded` is told, and the reader gets an error instead of
 * more bytes. For a client that reads the body itself (the MCP client's transport, JSON or SSE).
 */
export function boundedResponse(
  response: Response,
  meter: AnswerMeter,
  onExceeded: (crossed: ExceededBound) => void,
): Response {
  const init = { status: response.status, statusText: response.statusText, headers: response.headers };
  const source = response.body;
  if (!source) return response;
  const early = meter.announced(Number(response.headers.get("content-length") ?? "0") || 0);
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (!early) return;
      onExceeded(early);
      await reader.cancel();
      controller.error(new Error(`the answer is larger than ${early.max} ${early.bound}`));
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      const crossed = meter.feed(value);
      if (!crossed) {
        controller.enqueue(value);
        return;
      }
      onExceeded(crossed);
      await reader.cancel();
      controller.error(new Error(`the answer crossed its ${crossed.bound} bound (${crossed.max})`));
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(body, init);
}
