// What `npm run fleet` concludes from a burst: the answers counted by kind, the checks against the
// sandbox's own records, and the table it prints.

/** Answers counted by kind, the held ones by the cap they name, and those on `sharedOrder` apart. */
export function tally(answers, sharedOrder) {
  const kinds = () => ({ success: 0, held_effect: 0, held_cap: 0, other: 0 });
  const counts = { ...kinds(), held_cap_by: {}, shared_order: kinds(), held_effect_on_other_orders: [] };
  for (const answer of answers) {
    counts[answer.kind]++;
    if (answer.kind === "held_cap")
      counts.held_cap_by[answer.cap] = (counts.held_cap_by[answer.cap] ?? 0) + 1;
    if (answer.order === sharedOrder) counts.shared_order[answer.kind]++;
    else if (answer.kind === "held_effect") counts.held_effect_on_other_orders.push(answer.order);
  }
  return counts;
}

/** Each check: what it holds, whether it did, and the figures it read. */
export function checksOf(figures) {
  const { outcomes, sandbox } = figures;
  const issued = sandbox.refunds - sandbox.refunds_before;
  const most = Math.floor(figures.daily_cap_cents / figures.amount_cents);
  const check = (what, pass, seen) => ({ what, pass, seen });
  return [
    check(`the sandbox holds at most ${most} refunds (the daily cap)`, issued <= most, `${issued}`),
    // At most one: the shared order's first call may itself be held on the daily cap, and then the
    // others wait naming it (an effect about to be made counts), so the order may end with none.
    check(
      `at most one refund on the shared order ${figures.shared_order}, one for each success on it`,
      sandbox.refunds_on_shared_order <= 1 &&
        sandbox.refunds_on_shared_order === outcomes.shared_order.success,
      `${sandbox.refunds_on_shared_order}`,
    ),
    check(
      "no order refunded twice",
      sandbox.orders_refunded_twice.length === 0,
      sandbox.orders_refunded_twice.join(", ") || "none",
    ),
    check(
      "one sandbox refund for each success answered",
      issued === outcomes.success,
      `${issued} refunds, ${outcomes.success} successes`,
    ),
    check(
      "every other answer is approval_required naming the cap or the earlier effect",
      outcomes.other === 0,
      `${outcomes.other} other`,
    ),
    check(
      "an earlier effect is named only on the shared order",
      outcomes.held_effect_on_other_orders.length === 0,
      outcomes.held_effect_on_other_orders.join(", ") || "only there",
    ),
  ];
}

const ms = (value) =>
  value === null || value === undefined || Number.isNaN(value) ? "n/a" : value.toFixed(1);
const rate = (value) => value.toFixed(1);

/** The result as a few short tables. */
export function printFleet(report) {
  const { outcomes, burst, latency_ms, claim_ms, sandbox } = report;
  const caps = Object.entries(outcomes.held_cap_by)
    .map(([cap, count]) => `${cap} ${count}`)
    .join(", ");
  const shared = outcomes.shared_order;
  console.log(`
${report.runs} runs of hooli, one ${report.amount_cents}-cent refund each, all at once; ${report.shared_order_runs} on ${report.shared_order}
(${report.machine.cpus} cores, load ${report.machine.load_average_1m.before.toFixed(2)} before, storage on ${report.storage})

| answers | count |
| --- | --- |
| success | ${outcomes.success} |
| approval_required, earlier effect | ${outcomes.held_effect} |
| approval_required, cap | ${outcomes.held_cap}${caps ? ` (${caps})` : ""} |
| anything else | ${outcomes.other} |
| on ${report.shared_order}: success / earlier effect / cap / else | ${shared.success} / ${shared.held_effect} / ${shared.held_cap} / ${shared.other} |

| burst | |
| --- | --- |
| wall time | ${ms(burst.wall_ms)} ms |
| effects/s (successful refunds / wall time) | ${rate(burst.effects_per_s)} |
| calls/s | ${rate(burst.calls_per_s)} |

| ms | p50 | p99 | n |
| --- | --- | --- | --- |
| call latency, client | ${ms(latency_ms.p50)} | ${ms(latency_ms.p99)} | ${latency_ms.n} |
| claim_ms, tenant-wide step (traces) | ${ms(claim_ms?.p50)} | ${ms(claim_ms?.p99)} | ${claim_ms ? claim_ms.n : "n/a"} |

sandbox: ${sandbox.refunds} refunds of hooli (${sandbox.refunded_cents} cents), ${sandbox.refunds_on_shared_order} on ${report.shared_order}; ${report.trace_entries} refund entries in the traces; requests resent by the client: ${report.client_resent_requests}
`);
  for (const { what, pass, seen } of report.checks)
    console.log(`${pass ? "ok  " : "FAIL"}  ${what}: ${seen}`);
  for (const other of report.others.slice(0, 10)) console.log(`  else: ${other.order}: ${other.what}`);
  console.log(report.pass ? "\nfleet: every check holds" : "\nfleet: a check failed");
}
