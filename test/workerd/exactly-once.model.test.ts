import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, it } from "vitest";
import { fleetLimits, limits, modelCommand } from "./model/arbitraries";
import { undoCatalogChanges } from "./model/catalog-commands";
import { openSequence, type SequenceStats } from "./model/commands";
import { settleAndCheckViews } from "./model/derived-views";
import { openRunsOf, type ReferenceModel, TIMEOUT_MS } from "./model/reference";

/**
 * A model-based test of the run ledger against its guarantees (test/workerd/model/violation.ts): random sequences of agent
 * calls (REST and MCP, reordered arguments, intents, bursts), operator decisions (two-person rules
 * and approvals with edited arguments among them), upstream faults,
 * ledger and effect shard restarts, an operators' directory that goes down, deadlines and /end,
 * deploys that change the catalog or the tenants' table while runs are open (a tool the runs call,
 * or nothing they depend on: test/workerd/model/catalog-commands.ts), run against the real worker
 * and sandbox. Several runs of one tenant (hooli) share its orders and value
 * caps: one repeats another's refund, as it was or with another reason or amount, and the sandbox's
 * records of every run are held to rules 9 and 10 (test/workerd/model/across-runs.ts). After every step the answers are checked (test/workerd/model/answer-checks.ts),
 * then the run status, the approvals API and the sandbox's own records
 * (test/workerd/model/world-checks.ts); once the sequence is quiet, the operators' lists are held to
 * the ledgers (test/workerd/model/derived-views.ts).
 *
 * CI runs a seeded, bounded share. `npm run soak` (scripts/soak.mjs) sets SOAK_RUNS and SOAK_SEED:
 * that many sequences, longer, in chunks with seeds it prints; `SOAK_SEED=<seed> SOAK_RUNS=<n>
 * npm run soak -- --only model` replays one chunk.
 */

const soakRuns = Number.parseInt(env.SOAK_RUNS ?? "", 10);
const SOAK = Number.isInteger(soakRuns) && soakRuns > 0;
const soakSeed = Number.parseInt(env.SOAK_SEED ?? "", 10);

const PLAN = SOAK
  ? {
      numRuns: soakRuns,
      maxCommands: 30,
      seed: Number.isInteger(soakSeed) ? soakSeed : Date.now() % 2_147_483_647,
      slowFaultsPerSequence: 3,
      shrinkBudgetMs: 600_000,
      fleetDaySpent: 20_000,
    }
  : {
      numRuns: 15,
      maxCommands: 11,
      seed: 1_100_011,
      slowFaultsPerSequence: 1,
      shrinkBudgetMs: 90_000,
      fleetDaySpent: 15_000,
    };

/**
 * A sequence costs a few seconds at most plus the tool timeouts its slow faults wait for (this
 * test runs against the short-timeout catalog, test/workerd/short-timeouts/catalog.ts: a second
 * each); shrinking a failure re-runs sequences, so it gets its own budget on top.
 */
const SLOW_FAULT_MS = Math.max(...Object.values(TIMEOUT_MS)) + 1_000;
const TEST_TIMEOUT_MS =
  PLAN.numRuns * (5_000 + PLAN.slowFaultsPerSequence * SLOW_FAULT_MS) + PLAN.shrinkBudgetMs + 60_000;

describe("exactly-once under any interleaving (model-based)", () => {
  it(
    "never doubles an effect (in one run or silently across runs), overspends a budget or a value cap, leaves an agent waiting on an approval that cannot execute, changes a replayed outcome, denies an effect the upstream holds, executes a two-person approval on one person's word or an edited approval's call as asked, or lets the operators' lists drift from the ledgers",
    async () => {
      const stats: SequenceStats = {
        sequences: 0,
        commands: 0,
        sequencesOpened: 0,
        acrossRuns: {},
        twoPerson: { decided: 0, reachedUpstream: 0 },
        catalog: { unrelated: 0, related: 0, voided: 0 },
      };
      let firstFailureAt: number | null = null;
      const property = fc.asyncProperty(
        limits,
        limits,
        fleetLimits,
        fc.commands([modelCommand], { maxCommands: PLAN.maxCommands, size: "max" }),
        async (acmeLimits, globexLimits, hooliLimits, commands) => {
          // Past the shrink budget, further candidates are skipped: fast-check then reports the
          // smallest counterexample found so far instead of shrinking for an unbounded time.
          fc.pre(firstFailureAt === null || Date.now() - firstFailureAt < PLAN.shrinkBudgetMs);
          stats.sequences++;
          try {
            const opened: ReferenceModel[] = [];
            await fc.asyncModelRun(async () => {
              const sequence = await openSequence(
                {
                  acme: acmeLimits,
                  globex: globexLimits,
                  hooli: hooliLimits,
                  fleetDaySpent: PLAN.fleetDaySpent,
                  slowFaults: PLAN.slowFaultsPerSequence,
                },
                stats,
              );
              opened.push(sequence.model);
              return sequence;
            }, commands);
            // The sequence goes quiet: whatever failed between a commit and its delivery has healed.
            for (const model of opened) await settleAndCheckViews(openRunsOf(model));
          } catch (error) {
            firstFailureAt ??= Date.now();
            throw error;
          }
        },
      );
      try {
        await fc.assert(property, { numRuns: PLAN.numRuns, seed: PLAN.seed });
      } finally {
        undoCatalogChanges();
        console.log(
          `model-based: ${stats.sequences} sequences, ${stats.commands} commands tried (seed ${PLAN.seed}); across runs: ${JSON.stringify(stats.acrossRuns)}; two-person approvals (rule 11): ${stats.twoPerson.decided} refunds over the threshold decided at once, ${stats.twoPerson.reachedUpstream} reached the upstream after two people approved; catalog changes (rule 14): ${stats.catalog.unrelated} unrelated, ${stats.catalog.related} to a called tool, voiding ${stats.catalog.voided} pending approvals`,
        );
      }
    },
    TEST_TIMEOUT_MS,
  );
});
