import { reset } from "cloudflare:test";
import { beforeAll } from "vitest";
import { forgetDocuments } from "../../src/egress/remembered-fetch";
import { forgetAnnouncement } from "../../src/ledger/catalog-client";
import { forgetWaitingMetrics } from "../../src/metrics/store-sink";
import { forgetOverLimit } from "../../src/ratelimit/auth-failures";
import { forgetRemoteDefinitions } from "../../src/upstream/mcp-definitions";
import { forgetConnections } from "../../src/upstream/mcp-session";
import { wakeRestarted } from "./restarted-objects";

/**
 * Runs before each workerd test file (vitest.config.ts `setupFiles`). A runtime serves file after
 * file, so each file starts from what a fresh runtime would give it: no Durable Object storage, and
 * an isolate that remembers nothing of the storage that is gone.
 */

/**
 * The global `fetch` as the runtime started with it. The proxy routes the OAuth library's fetches
 * through its guard by wrapping the global `fetch` once per isolate (src/oauth/library-fetch.ts),
 * and a file that replaces `fetch` for a test host expects that wrapping to go around its
 * replacement, as it does in a fresh isolate. Restored as the file is imported, before the test
 * file's own module code reads `fetch`.
 */
const PRISTINE_FETCH = Symbol.for("edge-tool-proxy.test.pristine-fetch");
const held = globalThis as typeof globalThis & { [PRISTINE_FETCH]?: typeof fetch };
held[PRISTINE_FETCH] ??= globalThis.fetch;
globalThis.fetch = held[PRISTINE_FETCH];

beforeAll(async () => {
  // An object a test restarted and left unused keeps its storage out of the reset's reach.
  await wakeRestarted();
  // Every Durable Object of the runtime, the sandbox's included: storage and alarms deleted,
  // instances aborted with the work they had in flight.
  await reset();
  // What the isolate remembers of that storage: a batch of health counts and its scheduled flush
  // (scheduled in an object that is gone), the catalog announced to the beacon, sources and key
  // prefixes over the failed-sign-in limit, fetched client documents, remote MCP servers'
  // definitions and sessions.
  forgetWaitingMetrics();
  forgetAnnouncement();
  forgetOverLimit();
  forgetDocuments();
  forgetRemoteDefinitions();
  forgetConnections();
});
