/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import { formatMoney } from "../../core/money";
import type { CapLimit, EarlierEffect, ValueCapName, ValueUsage } from "../../wire/effects";
import { displayArgs, type ToolValues } from "../display-args";
import { formatTimestamp } from "../format";
import { ArgsList } from "./args-list";
import { Badge } from "./layout";

/**
 * What the tenant-wide state of effects says about an approval: other runs' effects on the same
 * business thing, the value cap the call would pass, and what the tenant moved today.
 */

const CAP_NAMES = {
  per_run: "Per run",
  per_day: "Per day (whole tenant)",
  per_subject_day: "Per subject per day",
  per_user_day: "Per user per day",
  per_user_destructive_day: "Destructive calls per user per day",
} as const satisfies Record<ValueCapName, string>;

/** `order_id H0100`: the arguments that name the business thing, as a short phrase. */
function identityPhrase(identity: Record<string, unknown>): string {
  return Object.entries(identity)
    .map(([field, value]) => `${field} ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(", ");
}

/**
 * Other runs' effects on what this call acts on. Pending, it is the warning an operator cannot miss
 * (approving would do it again); decided, it is the record of what the operator was shown.
 */
export const EarlierEffects: FC<{
  effects: readonly EarlierEffect[];
  pending: boolean;
  money: ToolValues;
}> = ({ effects, pending, money }) => (
  <div class="notice notice-warn" role={pending ? "alert" : undefined} id="earlier-effects">
    <p>
      <strong>
        Already done by {effects.length === 1 ? "another run" : `${effects.length} other runs`}: the same{" "}
        {identityPhrase(effects[0]?.identity ?? {})}.
      </strong>{" "}
      {pending ? "Approving this call would do it again." : "As it stood when the call asked."}
    </p>
    <ul class="earlier-effects">
      {effects.map((effect) => (
        <li>
          <code>{effect.tool}</code> <Badge value={effect.outcome} /> in run{" "}
          <a href={`/console/runs/${encodeURIComponent(effect.run_id)}`}>
            <code>{effect.run_id}</code>
          </a>
          , <time datetime={effect.at}>{formatTimestamp(effect.at)}</time>
          {effect.external_id ? (
            <>
              , upstream id <code>{effect.external_id}</code>
            </>
          ) : null}
          {/* The same effect identity, so the same tool (`namespace.name`) as the call being decided. */}
          <ArgsList args={displayArgs(effect.tool.slice(effect.tool.indexOf(".") + 1), effect.args, money)} />
        </li>
      ))}
    </ul>
  </div>
);

/** The value cap the call would pass, as it stood when the call asked. */
export const CapExceeded: FC<{ limit: CapLimit; pending: boolean }> = ({ limit, pending }) => {
  // A user's destructive calls are counted, not priced.
  const money = (minorUnits: number) =>
    limit.cap === "per_user_destructive_day"
      ? `${minorUnits} ${minorUnits === 1 ? "call" : "calls"}`
      : formatMoney(minorUnits, limit.currency);
  return (
    <section aria-labelledby="cap-heading">
      <h2 id="cap-heading">Value cap this call would exceed</h2>
      <div class="card" id="value-cap">
        <dl class="facts">
          <dt>Cap</dt>
          <dd>
            <strong>{CAP_NAMES[limit.cap]}</strong> <code>{limit.cap}</code>
          </dd>
          <dt>Currency</dt>
          <dd>{limit.currency}</dd>
          {limit.subject !== null ? (
            <>
              <dt>{limit.cap.startsWith("per_user") ? "User" : "Subject"}</dt>
              <dd>
                <code>{limit.subject}</code>
              </dd>
            </>
          ) : null}
          <dt>Limit</dt>
          <dd>{money(limit.limit)}</dd>
          <dt>Used</dt>
          <dd>{money(limit.used)}</dd>
          <dt>Reserved</dt>
          <dd>{money(limit.reserved)}</dd>
          <dt>Remaining</dt>
          <dd>{money(limit.remaining)}</dd>
          <dt>This call</dt>
          <dd class="fact-warning">
            <strong>{money(limit.amount)}</strong>
          </dd>
        </dl>
        <p class="hint">
          {pending
            ? "Approving goes beyond the cap: it is recorded as an operator override in your name, and the amount counts as used."
            : "Figures as they stood when the call asked; an approval beyond the cap is recorded as an operator override."}
        </p>
      </div>
    </section>
  );
};

/** What the tenant moved today in each capped currency; null when the shards could not be read. */
export const CapsUsedToday: FC<{ usage: readonly ValueUsage[] | null }> = ({ usage }) => (
  <section aria-labelledby="usage-heading">
    <h2 id="usage-heading">Caps used today</h2>
    {usage === null ? (
      <p class="card empty">Today's usage could not be read; reload the page to try again.</p>
    ) : (
      <table id="caps-today">
        <caption>Value moved by every run of your tenant today (UTC), per capped currency</caption>
        <thead>
          <tr>
            <th scope="col">Currency</th>
            <th scope="col">Daily cap</th>
            <th scope="col">Used</th>
            <th scope="col">Reserved</th>
            <th scope="col">Of which operator overrides</th>
          </tr>
        </thead>
        <tbody>
          {usage.map((row) => (
            <tr>
              <th scope="row">
                {row.currency} <span class="meta">{row.day}</span>
              </th>
              <td>{row.per_day === null ? "none" : formatMoney(row.per_day, row.currency)}</td>
              <td>{formatMoney(row.used, row.currency)}</td>
              <td>{formatMoney(row.reserved, row.currency)}</td>
              <td>{formatMoney(row.overrides, row.currency)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </section>
);
