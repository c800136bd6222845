/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { EnvironmentName } from "../../envelope";
import type { RunStatus } from "../../wire/run-status";
import type { TraceEntry } from "../../wire/trace-entry";
import { displayArgs } from "../display-args";
import { formatLatency, formatSpan, formatTimestamp } from "../format";
import type { ConsoleSession } from "../session";
import { ArgsList } from "./args-list";
import { Badge, Layout } from "./layout";

export interface RunPageProps {
  environment: EnvironmentName;
  session: ConsoleSession;
  run: RunStatus;
  entries: TraceEntry[];
}

/** The widest latency bar, in rem; the slowest call of the run fills it. */
const BAR_REM = 12;

/** Calls an operator's approval executed carry the operator as actor; the agent's own calls say "agent". */
export function executedByOperator(entry: TraceEntry): boolean {
  return entry.actor.startsWith("operator:");
}

/**
 * The call's own attempts at the upstream, and apart from them the postcondition's read: a check
 * of the effect is not another try of it.
 */
export function upstreamSummary(entry: TraceEntry): string {
  const checks = entry.upstream_attempts.filter((attempt) => attempt.purpose === "check");
  const attempts = entry.upstream_attempts.length - checks.length;
  if (attempts === 0) return entry.replayed ? "not called: served from the ledger" : "not called";
  const status = entry.upstream_status === null ? "no HTTP answer" : `HTTP ${entry.upstream_status}`;
  const summary = `${status} · ${attempts} ${attempts === 1 ? "attempt" : "attempts"}`;
  if (checks.length === 0) return summary;
  const last = checks[checks.length - 1];
  const answer = last?.upstream_status == null ? "no HTTP answer" : `HTTP ${last.upstream_status}`;
  return `${summary} · postcondition check: ${answer}${checks.length > 1 ? ` after ${checks.length} tries` : ""}`;
}

const Entry: FC<{ entry: TraceEntry; openedAt: number; slowest: number }> = ({
  entry,
  openedAt,
  slowest,
}) => {
  const byOperator = executedByOperator(entry);
  const bar = entry.latency_ms !== null && slowest > 0 ? (entry.latency_ms / slowest) * BAR_REM : 0;
  return (
    <li class={`outcome-${entry.outcome}${byOperator ? " by-operator" : ""}`}>
      <div class="entry-head">
        <span class="seq">#{entry.seq}</span>
        <span class="tool">{entry.tool ?? "(unknown tool)"}</span>
        {entry.side_effect ? <Badge value={entry.side_effect} /> : null}
        <Badge value={entry.outcome} />
        {byOperator ? <span class="badge badge-operator">executed by operator approval</span> : null}
        {entry.replayed ? <span class="badge">replayed</span> : null}
      </div>
      <dl class="facts">
        <dt>Started</dt>
        <dd>
          <time datetime={entry.started_at}>{formatTimestamp(entry.started_at)}</time>, +
          {formatSpan(Date.parse(entry.started_at) - openedAt)} into the run
        </dd>
        <dt>Actor</dt>
        <dd>
          <code>{entry.actor}</code>
        </dd>
        <dt>Latency</dt>
        <dd class="latency">
          {formatLatency(entry.latency_ms)}
          {bar > 0 ? <span class="bar" aria-hidden="true" style={`width:${bar.toFixed(2)}rem`} /> : null}
        </dd>
        {entry.error_code ? (
          <>
            <dt>Error</dt>
            <dd>
              <code>{entry.error_code}</code>
            </dd>
          </>
        ) : null}
        <dt>Upstream</dt>
        <dd>{upstreamSummary(entry)}</dd>
        <dt>Arguments</dt>
        <dd>
          <ArgsList args={displayArgs(entry.tool, entry.args)} short />
        </dd>
      </dl>
    </li>
  );
};

/** A run's trace as a timeline, oldest first: every dispatch with its outcome and latency. */
export const RunPage: FC<RunPageProps> = ({ environment, session, run, entries }) => {
  const openedAt = Date.parse(run.created_at);
  const slowest = Math.max(0, ...entries.map((entry) => entry.latency_ms ?? 0));
  return (
    <Layout title={`Run ${run.run_id}`} environment={environment} session={session}>
      <p class="back">
        <a href="/console">← Pending approvals</a>
      </p>
      <h1>
        Run <code>{run.run_id}</code> <Badge value={run.state} />
      </h1>
      <p class="lede">
        Namespace <code>{run.namespace}</code> · opened {formatTimestamp(run.created_at)} · deadline{" "}
        {formatTimestamp(run.deadline_at)}
      </p>
      <h2 id="budget-heading">Budget left</h2>
      <ul class="budget" aria-labelledby="budget-heading">
        <li>
          <strong>{run.budget.calls_left}</strong> of {run.limits.max_calls} calls
        </li>
        <li>
          <strong>{run.budget.writes_left}</strong> of {run.limits.max_writes} writes
        </li>
        <li>
          <strong>{run.budget.destructive_left}</strong> of {run.limits.max_destructive} destructive
        </li>
        <li>
          <strong>{formatSpan(run.budget.deadline_ms_left)}</strong> to the deadline
        </li>
      </ul>
      <h2 id="trace-heading">Trace</h2>
      {entries.length === 0 ? (
        <p class="card empty">No calls yet.</p>
      ) : (
        <ol class="timeline" aria-labelledby="trace-heading">
          {entries.map((entry) => (
            <Entry entry={entry} openedAt={openedAt} slowest={slowest} />
          ))}
        </ol>
      )}
    </Layout>
  );
};
