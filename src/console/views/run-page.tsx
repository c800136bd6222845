/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { ApprovalSummary } from "../../approvals/model";
import type { SignedInOperator } from "../../auth/principal";
import type { EnvironmentName } from "../../wire/envelope";
import type { RunStatus } from "../../wire/run-status";
import type { TraceEntry } from "../../wire/trace-entry";
import { displayArgs, type ToolValues } from "../display-args";
import { formatLatency, formatSpan, formatTimestamp } from "../format";
import { plural } from "../plural";
import { ApprovalTable } from "./approval-table";
import { ArgsList } from "./args-list";
import { EditSummary } from "./edit-summary";
import { Badge, Layout } from "./layout";

export interface RunPageProps {
  environment: EnvironmentName;
  session: SignedInOperator;
  run: RunStatus;
  entries: TraceEntry[];
  /** Where the next page of calls starts, when the run has more than this page shows. */
  nextCursor: string | null;
  /** The run's approvals, from the tenant's directory, newest first. */
  approvals: ApprovalSummary[];
  now: number;
  /** The money fields of the run's namespace: amounts read in their currency. */
  money: ToolValues;
}

/** The widest latency bar, in rem; the slowest call of the run fills it. */
const BAR_REM = 12;

/** Calls an operator's approval executed carry the operator as actor; the agent's own calls say "agent". */
export function executedByOperator(entry: TraceEntry): boolean {
  return entry.actor.startsWith("operator:");
}

/**
 * Answers by which the upstream said it did nothing (the arguments, credentials or record were
 * refused, a conflict, or a rate limit): such an attempt of a write is not an effect.
 */
const REFUSED_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 409, 422, 429]);

/**
 * The upstream requests of a call, effects apart from checks: "1 effect · 1 check". A check is the
 * postcondition's read after a claimed success, not another try of the effect. A read's requests
 * are reads, never effects ("read", or "read, 3 attempts" after retries); a write's attempt the
 * upstream refused (429, 4xx) did nothing: "no effect (1 attempt refused)".
 */
export function attemptCounts(entry: TraceEntry): string {
  const checks = entry.upstream_attempts.filter((attempt) => attempt.purpose === "check").length;
  const attempts = entry.upstream_attempts.filter((attempt) => attempt.purpose !== "check");
  const parts: string[] = [];
  if (entry.side_effect === "read") {
    parts.push(attempts.length > 1 ? `read, ${plural(attempts.length, "attempt")}` : "read");
  } else {
    const refused = attempts.filter(
      (attempt) => attempt.upstream_status !== null && REFUSED_STATUSES.has(attempt.upstream_status),
    ).length;
    const effects = attempts.length - refused;
    if (effects > 0) parts.push(plural(effects, "effect"));
    if (refused > 0) {
      const told = `${plural(refused, "attempt")} refused`;
      parts.push(effects > 0 ? told : `no effect (${told})`);
    }
  }
  if (checks > 0) parts.push(plural(checks, "check"));
  return parts.join(" · ");
}

/** The effect's answer, its attempts, and what the last check read: "HTTP 201 · 1 effect · 1 check: HTTP 200". */
export function upstreamSummary(entry: TraceEntry): string {
  const checks = entry.upstream_attempts.filter((attempt) => attempt.purpose === "check");
  if (entry.upstream_attempts.length === checks.length) {
    return entry.replayed ? "not called: served from the ledger" : "not called";
  }
  const status = entry.upstream_status === null ? "no HTTP answer" : `HTTP ${entry.upstream_status}`;
  const summary = `${status} · ${attemptCounts(entry)}`;
  const last = checks[checks.length - 1];
  if (!last) return summary;
  return `${summary}: ${last.upstream_status === null ? "no HTTP answer" : `HTTP ${last.upstream_status}`}`;
}

/** Who made the call: the agent, or the operator whose approval executed it, by name when known. */
const CalledBy: FC<{ entry: TraceEntry; names: ReadonlyMap<string, string> }> = ({ entry, names }) => {
  if (!executedByOperator(entry)) return <code>{entry.actor}</code>;
  const name = entry.actor_name ?? names.get(entry.actor) ?? null;
  return name ? (
    <>
      <strong>{name}</strong> (<code>{entry.actor}</code>)
    </>
  ) : (
    <code>{entry.actor}</code>
  );
};

/** What the model was given, masked and fenced as it saw it; long ones scroll inside their box. */
const Result: FC<{ entry: TraceEntry }> = ({ entry }) =>
  entry.result === null || entry.result === undefined ? (
    <span class="meta">{entry.outcome === "pending" ? "not finished" : "not kept"}</span>
  ) : (
    <pre class="result" tabindex={0}>
      {JSON.stringify(entry.result, null, 2)}
    </pre>
  );

const Entry: FC<{
  entry: TraceEntry;
  openedAt: number;
  slowest: number;
  names: ReadonlyMap<string, string>;
  money: ToolValues;
}> = ({ entry, openedAt, slowest, names, money }) => {
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
        {entry.via ? <span class="badge">via {entry.via}</span> : null}
        {entry.edit ? <span class="badge badge-edited">edited before approval</span> : null}
      </div>
      <dl class="facts">
        <dt>Started</dt>
        <dd>
          <time datetime={entry.started_at}>{formatTimestamp(entry.started_at)}</time>, +
          {formatSpan(Date.parse(entry.started_at) - openedAt)} into the run
        </dd>
        <dt>Called by</dt>
        <dd>
          <CalledBy entry={entry} names={names} />
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
          <ArgsList args={displayArgs(entry.tool, entry.args, money)} short />
        </dd>
        {entry.edit ? (
          <>
            <dt>Edited before approval</dt>
            <dd class="trace-edit">
              <EditSummary tool={entry.tool} edit={entry.edit} approved={entry.args} money={money} />
            </dd>
          </>
        ) : null}
        <dt>Result</dt>
        <dd>
          <Result entry={entry} />
        </dd>
      </dl>
    </li>
  );
};

/**
 * A run's calls as a timeline, oldest first: every dispatch with its outcome, who made it, its
 * upstream attempts and the result the model was given; and the approvals it asked for.
 */
export const RunPage: FC<RunPageProps> = ({
  environment,
  session,
  run,
  entries,
  nextCursor,
  approvals,
  now,
  money,
}) => {
  const openedAt = Date.parse(run.created_at);
  const slowest = Math.max(0, ...entries.map((entry) => entry.latency_ms ?? 0));
  // Operators by id, named as the approvals they decided name them.
  const names = new Map<string, string>();
  for (const approval of approvals) {
    if (approval.decided_by && approval.decided_by_name)
      names.set(approval.decided_by, approval.decided_by_name);
  }
  return (
    <Layout title={`Run ${run.run_id}`} environment={environment} session={session} section="runs">
      <p class="back">
        <a href="/console/runs">← Runs</a>
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
          <strong>{run.budget.calls_left}</strong> of {plural(run.limits.max_calls, "call")}
        </li>
        <li>
          <strong>{run.budget.writes_left}</strong> of {plural(run.limits.max_writes, "write")}
        </li>
        <li>
          <strong>{run.budget.destructive_left}</strong> of{" "}
          {plural(run.limits.max_destructive, "destructive call")}
        </li>
        <li>
          <strong>{formatSpan(run.budget.deadline_ms_left)}</strong> to the deadline
        </li>
      </ul>
      {approvals.length > 0 ? (
        <>
          <h2>Approvals</h2>
          <ApprovalTable approvals={approvals} now={now} withRun={false} money={money} />
        </>
      ) : null}
      <h2 id="trace-heading">Calls</h2>
      {entries.length === 0 ? (
        <p class="card empty">No calls yet.</p>
      ) : (
        <ol class="timeline" aria-labelledby="trace-heading">
          {entries.map((entry) => (
            <Entry entry={entry} openedAt={openedAt} slowest={slowest} names={names} money={money} />
          ))}
        </ol>
      )}
      {nextCursor ? (
        <p class="pager">
          <a
            href={`/console/runs/${encodeURIComponent(run.run_id)}?cursor=${encodeURIComponent(nextCursor)}`}
          >
            Later calls →
          </a>
        </p>
      ) : null}
    </Layout>
  );
};
