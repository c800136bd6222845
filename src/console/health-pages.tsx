/** @jsxImportSource hono/jsx */
import type { Context } from "hono";
import { environmentOf } from "../config/environment";
import { readMetrics } from "../metrics/read";
import type { ConsoleEnv } from "./console-env";
import { deprecatedCallers } from "./deprecated-callers";
import { tenantUpstreams } from "./tenant-tools";
import { HealthPage } from "./views/health-page";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/**
 * `/console/health`: the signed-in operator's tenant, two days in hourly buckets ending with the
 * current hour: the last 24 are charted and compared with the 24 before them; and who still calls
 * the tenant's deprecated tools.
 */
export async function showHealth(c: Context<ConsoleEnv>) {
  const session = c.get("session");
  const until = Math.floor(Date.now() / HOUR) * HOUR + HOUR;
  const since = until - 2 * DAY;
  const [reading, deprecated] = await Promise.all([
    readMetrics(c.env, session.tenant, { since, until, bucket: "hour" }),
    deprecatedCallers(c.env, session.tenant, since),
  ]);
  return c.html(
    <HealthPage
      environment={environmentOf(c.env)}
      session={session}
      reading={reading}
      split={until - DAY}
      upstreams={tenantUpstreams(c.env, session.tenant)}
      deprecated={deprecated}
    />,
    reading.ok || reading.reason === "not_configured" ? 200 : 503,
  );
}
