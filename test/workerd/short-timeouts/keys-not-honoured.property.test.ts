import { env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { propertyPlans } from "../../property-plan";
import { armFault, callTool, openRun, refundsOf, sandboxRequests } from "../helpers";
import { SHORT_TIMEOUT_MS } from "./catalog";

/**
 * At most one effect per key at the upstream's own records, whether or not the upstream honours
 * keys: random refunds to the sandbox's keyed refunds API (`issue_refund`) and to its v0 API that
 * ignores keys (`issue_refund_v0`, settled by a read), each under a fault the sandbox plays for real
 * (answered before the application, cut off after it, slow after it, or hung and abandoned), then
 * resent by the model a random number of times. The sandbox's refunds and request log are the
 * evidence; what the model was told must agree with them.
 */

const plan = propertyPlans(env);

const FAULTS = ["none", "bad_gateway", "error_500", "truncated", "slow_success", "hang"] as const;
type Fault = (typeof FAULTS)[number];

/** initech executes refunds without an operator; each case refunds an order of its own. */
let nextOrder = 3201;

async function arm(runId: string, fault: Fault, path: string) {
  if (fault === "none") return;
  const waits = fault === "slow_success" || fault === "hang";
  await armFault(runId, {
    mode: fault,
    path_prefix: path,
    times: 1,
    ...(waits ? { hang_ms: SHORT_TIMEOUT_MS + 300 } : {}),
  });
}

describe("exactly once, whether the upstream honours keys or not (property)", () => {
  it("leaves at most one refund per key, and never tells the model one happened that did not", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("issue_refund", "issue_refund_v0"),
        fc.constantFrom(...FAULTS),
        fc.integer({ min: 0, max: 3 }),
        async (tool, fault, resends) => {
          const order = `I${nextOrder++}`;
          const run = await openRun("initech");
          const path = tool === "issue_refund" ? "/refunds" : "/v0/refunds";
          await arm(run.id, fault, path);
          const args = { order_id: order, amount_cents: 300, reason: "price_error" };
          const answers = [];
          for (let sent = 0; sent <= resends; sent++) {
            answers.push((await callTool(run, tool, args)).body);
          }
          // A hung request is abandoned: let its hang pass so whatever it would do is done.
          if (fault === "slow_success" || fault === "hang") {
            await new Promise((resolve) => setTimeout(resolve, 400));
          }
          const refunds = await refundsOf(order);
          expect(refunds.length, JSON.stringify(answers)).toBeLessThanOrEqual(1);
          if (answers.some((answer) => answer.outcome === "success")) expect(refunds).toHaveLength(1);
          const last = answers.at(-1);
          if (last?.error?.side_effect_confirmed === false) expect(refunds).toHaveLength(0);
          if (tool === "issue_refund_v0") {
            // The upstream ignores keys, so every 2xx it answered was a new refund.
            const made = (await sandboxRequests(run.id)).filter(
              (entry) =>
                entry.method === "POST" &&
                entry.path === path &&
                entry.status !== null &&
                entry.status >= 200 &&
                entry.status < 300,
            );
            expect(made.length).toBeLessThanOrEqual(1);
            for (const answer of answers)
              expect(answer.error?.message ?? "").not.toContain("cannot happen twice");
          }
        },
      ),
      plan({ seed: 20261207, numRuns: 12, soakAtMost: 200 }),
    );
  }, 120_000);
});
