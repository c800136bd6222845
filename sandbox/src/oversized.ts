import type { OversizedMode } from "./model";

/**
 * The oversized answers: what an upstream gone wrong (or hostile) sends after it has done the
 * work, streamed as it is generated so the sandbox holds none of it. A client that stops reading
 * (the proxy at its bounds) cancels the stream, and the generation stops with it.
 *
 * - `huge_string`: one 30 MB string.
 * - `huge_item`: one list item of 5 MB, one string.
 * - `many_items`: 200,000 small items, about 3 MB.
 * - `deep_nesting`: arrays nested 100,000 deep.
 * - `endless_stream`: a list of items of about 320 bytes that never ends (for MCP, an event stream of
 *   notifications that never ends).
 */

const CHUNK = 64 * 1024;
const encoder = new TextEncoder();

/** Parts of a body, produced one at a time as the reader asks; an endless one never returns. */
type Parts = Generator<string, void, undefined>;

function* repeated(text: string, times: number): Parts {
  const chunk = text.repeat(Math.max(1, Math.floor(CHUNK / text.length)));
  const perChunk = chunk.length / text.length;
  let left = times;
  for (; left >= perChunk; left -= perChunk) yield chunk;
  if (left > 0) yield text.repeat(left);
}

function* oversizedJson(mode: Exclude<OversizedMode, "endless_stream">): Parts {
  switch (mode) {
    case "huge_string":
      yield '{"results":[{"id":"item_1","text":"';
      yield* repeated("x", 30 * 1024 * 1024);
      yield '"}],"total":1}';
      return;
    case "huge_item":
      yield '{"results":[{"id":"item_1","text":"';
      yield* repeated("y", 5 * 1024 * 1024);
      yield '"}],"total":1}';
      return;
    case "many_items": {
      yield '{"results":[';
      let batch = "";
      for (let index = 0; index < 200_000; index++) {
        batch += `${index === 0 ? "" : ","}{"id":${index}}`;
        if (batch.length >= CHUNK) {
          yield batch;
          batch = "";
        }
      }
      yield `${batch}],"total":200000}`;
      return;
    }
    case "deep_nesting":
      yield '{"results":';
      yield* repeated("[", 100_000);
      yield* repeated("]", 100_000);
      yield ',"total":0}';
      return;
  }
}

function* endlessList(): Parts {
  yield '{"results":[';
  for (let index = 0; ; index++) {
    let batch = "";
    while (batch.length < CHUNK) batch += `{"id":${index++},"note":"${"n".repeat(300)}"},`;
    yield batch;
  }
}

function* endlessEvents(): Parts {
  const event = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"${"z".repeat(1000)}"}}\n\n`;
  for (;;) yield event.repeat(Math.floor(CHUNK / event.length));
}

function* asToolResult(id: unknown, parts: Parts): Parts {
  yield `{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},"result":{"content":[],"structuredContent":`;
  yield* parts;
  yield "}}";
}

/**
 * An endless stream is paced, a chunk every few milliseconds, as a real one trickles: a reader that
 * stops at a bound of 8 MiB still reads it for over half a second, long enough to be seen in flight.
 */
const ENDLESS_PACE_MS = 4;

function streamOf(parts: Parts, paceMs = 0): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (paceMs > 0) await scheduler.wait(paceMs);
      const next = parts.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    cancel() {
      parts.return();
    },
  });
}

/** A REST endpoint's answer of this mode: 200 JSON, generated as it is read. */
export function oversizedResponse(mode: OversizedMode): Response {
  const body =
    mode === "endless_stream" ? streamOf(endlessList(), ENDLESS_PACE_MS) : streamOf(oversizedJson(mode));
  return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
}

/**
 * The MCP server's answer of this mode to a `tools/call` with this JSON-RPC id: the result's
 * `structuredContent` is the oversized JSON; `endless_stream` is an event stream that never ends.
 */
export function oversizedToolResult(mode: OversizedMode, id: unknown): Response {
  if (mode === "endless_stream") {
    return new Response(streamOf(endlessEvents(), ENDLESS_PACE_MS), {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  }
  return new Response(streamOf(asToolResult(id, oversizedJson(mode))), {
    status: 200,
    headers: { "content-type": "application/json" },
  });
}
