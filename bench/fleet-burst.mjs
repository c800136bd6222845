// What `npm run fleet` sends and reads back: one refund from each of many hooli runs at once, the
// answers sorted by what they say, the tenant-wide step's time from each run's trace, and the
// refunds the sandbox itself holds.

import { okJson, send } from "./http.mjs";
import { drive } from "./measure.mjs";
import { summarise } from "./stats.mjs";

// hooli (wrangler.toml, sandbox env): refunds up to 1000 cents auto-approved, USD caps of 4000 a
// run, 2500 an order a day and 50000 a day; orders H0001-H0200 (sandbox/src/seed.ts).
const TENANT = "hooli";
const TENANT_KEY = "hooli-demo-key";
export const AMOUNT_CENTS = 1000;
export const DAILY_CAP_CENTS = 50_000;
const TOOL = "issue_refund";
// Opening runs is set-up, not the burst: a few at a time, so the burst starts on a quiet machine.
const SETUP_CONCURRENCY = 16;

const json = { "content-type": "application/json" };
const orderId = (number) => `H${String(number).padStart(4, "0")}`;

/**
 * The order each run refunds: the first `shared` runs all refund `H0001`, every other run an order
 * of its own (H0002, H0003, ...).
 */
export function ordersOf({ runs, shared }) {
  return Array.from({ length: runs }, (_, index) =>
    index < shared ? orderId(1) : orderId(index - shared + 2),
  );
}

/** Opens `count` hooli runs in the support namespace, each allowed the default one destructive call. */
export async function openRuns(proxyUrl, count) {
  const runs = new Array(count);
  await drive(
    async (index) => {
      const open = () =>
        send(`${proxyUrl}/v1/runs`, {
          method: "POST",
          headers: { authorization: `Bearer ${TENANT_KEY}`, ...json },
          body: JSON.stringify({ namespace: "support" }),
        });
      // A run opened twice leaves one unused: harmless, so an open with no answer is tried again.
      const opened = okJson("POST /v1/runs", await open().catch(open));
      runs[index] = { id: opened.data.run_id, token: opened.data.run_token };
    },
    { concurrency: SETUP_CONCURRENCY, count },
  );
  return runs;
}

/**
 * What one answer says: `success`, `held_effect` (approval_required naming an earlier effect),
 * `held_cap` (approval_required naming a cap) or `other`, with what an `other` was.
 */
export function classify({ status, body }) {
  let envelope;
  try {
    envelope = JSON.parse(body.toString("utf8"));
  } catch {
    return { kind: "other", status, what: `HTTP ${status}, not JSON` };
  }
  if (status >= 200 && status < 300 && envelope.outcome === "success") return { kind: "success", status };
  const error = envelope.error ?? null;
  const details = error?.details ?? {};
  if (error?.code === "approval_required") {
    const earlier = Array.isArray(details.earlier_effects) ? details.earlier_effects : [];
    if (earlier.length > 0) {
      return { kind: "held_effect", status, earlier_runs: earlier.map((effect) => effect.run_id) };
    }
    if (typeof details.limit?.cap === "string") return { kind: "held_cap", status, cap: details.limit.cap };
  }
  return {
    kind: "other",
    status,
    what: `HTTP ${status}, outcome ${envelope.outcome}, ${error?.code ?? "no error code"}: ${error?.message ?? ""}`.slice(
      0,
      300,
    ),
  };
}

/**
 * Sends every run's one refund at once. Resolves with each answer's class and client latency, and
 * the burst's wall time from the first request sent to the last answer.
 */
export async function burst(proxyUrl, runs, orders) {
  const started = performance.now();
  const answers = await Promise.all(
    runs.map(async (run, index) => {
      const sent = performance.now();
      const order = orders[index];
      try {
        const response = await send(`${proxyUrl}/v1/runs/${run.id}/calls`, {
          method: "POST",
          headers: { authorization: `Bearer ${run.token}`, ...json },
          body: JSON.stringify({
            tool: TOOL,
            args: { order_id: order, amount_cents: AMOUNT_CENTS, reason: "user_cancel" },
          }),
        });
        return { order, run_id: run.id, latency_ms: performance.now() - sent, ...classify(response) };
      } catch (error) {
        // A call with no answer is an outcome to count, not a reason to stop: the sandbox still says
        // whether it acted.
        const latency_ms = performance.now() - sent;
        return {
          order,
          run_id: run.id,
          latency_ms,
          kind: "other",
          status: 0,
          what: `${error.message} after ${latency_ms.toFixed(0)} ms`,
        };
      }
    }),
  );
  return { answers, wall_ms: performance.now() - started };
}

/**
 * `claim_ms` of every refund in the runs' traces: how long the call's tenant-wide step took. Null
 * when no trace entry carries the field at all (a proxy from before it was recorded).
 */
export async function claimTimes(proxyUrl, runs) {
  const samples = [];
  let entries = 0;
  let withField = 0;
  await drive(
    async (index) => {
      const run = runs[index];
      const trace = okJson(
        "GET /v1/runs/{id}/trace",
        await send(`${proxyUrl}/v1/runs/${run.id}/trace`, {
          headers: { authorization: `Bearer ${run.token}` },
        }),
      );
      for (const entry of trace.data.entries) {
        if (!String(entry.tool ?? "").endsWith(TOOL)) continue;
        entries++;
        if (!("claim_ms" in entry)) continue;
        withField++;
        if (typeof entry.claim_ms === "number") samples.push(entry.claim_ms);
      }
    },
    { concurrency: SETUP_CONCURRENCY, count: runs.length },
  );
  return {
    trace_entries: entries,
    ...(withField === 0 ? { claim_ms: null } : { claim_ms: summarise(samples) }),
  };
}

/** The tenant's refunds as the sandbox records them: the source, not the proxy's word. */
export async function sandboxRefunds(sandboxUrl, adminToken) {
  const listed = okJson(
    "GET /_admin/refunds",
    await send(`${sandboxUrl}/_admin/refunds?tenant=${TENANT}`, {
      headers: { "x-sandbox-admin": adminToken },
    }),
  );
  return listed.refunds;
}
