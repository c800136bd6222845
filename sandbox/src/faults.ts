import { z } from "zod";
import type { FaultSpec, RequestMeta } from "./journal";
import type { ArmedFault, FaultMode } from "./model";

/**
 * Scripted upstream failures. Each reproduces what a real, misbehaving upstream or the
 * infrastructure in front of it sends back, leaks included, because that is what the proxy has to
 * survive and sanitize.
 */

export const DEFAULT_HANG_MS = 30_000;
const MAX_HANG_MS = 300_000;
const DEFAULT_RETRY_AFTER_S = 1;

export const FaultSpecSchema = z.strictObject({
  run_id: z.string().min(1).max(200),
  path_prefix: z.string().startsWith("/").max(200).optional(),
  mode: z.enum(["hang", "error_500", "bad_gateway", "html", "rate_limited"]),
  times: z.number().int().min(1).max(1000).optional(),
  hang_ms: z.number().int().min(0).max(MAX_HANG_MS).optional(),
  retry_after_s: z.number().int().min(0).max(3600).optional(),
});

/** Fills in defaults so the armed fault shows exactly what will happen. */
export function toFaultSpec(input: z.infer<typeof FaultSpecSchema>): FaultSpec {
  return {
    run_id: input.run_id,
    path_prefix: input.path_prefix ?? null,
    mode: input.mode,
    times: input.times ?? 1,
    hang_ms: input.mode === "hang" ? (input.hang_ms ?? DEFAULT_HANG_MS) : null,
    retry_after_s: input.mode === "rate_limited" ? (input.retry_after_s ?? DEFAULT_RETRY_AFTER_S) : null,
  };
}

/** Status of a fault that answers instead of the application (a hang answers normally, later). */
export function faultStatus(mode: Exclude<FaultMode, "hang">): number {
  switch (mode) {
    case "error_500":
      return 500;
    case "bad_gateway":
      return 502;
    case "html":
      return 200;
    case "rate_limited":
      return 429;
  }
}

export function faultResponse(
  fault: ArmedFault & { mode: Exclude<FaultMode, "hang"> },
  meta: RequestMeta,
): Response {
  const status = faultStatus(fault.mode);
  switch (fault.mode) {
    case "error_500":
      return new Response(stackTrace(meta), {
        status,
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    case "bad_gateway":
      return new Response(BAD_GATEWAY_PAGE, {
        status,
        headers: { "content-type": "text/html", server: "nginx/1.24.0" },
      });
    case "html":
      return new Response(loginPage(meta), {
        status,
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    case "rate_limited": {
      const retryAfter = fault.retry_after_s ?? DEFAULT_RETRY_AFTER_S;
      const body = {
        error: { code: "rate_limited", message: `Too many requests. Retry after ${retryAfter} second(s).` },
      };
      return Response.json(body, { status, headers: { "retry-after": String(retryAfter) } });
    }
  }
}

/** An unhandled exception rendered by a framework left in debug mode: stack, SQL and a private host. */
function stackTrace(meta: RequestMeta): string {
  const table = meta.path.split("/")[1]?.replaceAll("-", "_") || "records";
  const tenant = meta.tenant ?? "";
  const read = meta.method === "GET";
  const [error, method, sql] = read
    ? [
        "QueryFailedError: canceling statement due to statement timeout",
        "findOne",
        `SELECT * FROM "${table}" WHERE "tenant_id" = '${tenant}' AND "id" = $1 LIMIT 1`,
      ]
    : [
        "QueryFailedError: could not serialize access due to concurrent update",
        "save",
        `UPDATE "${table}" SET "updated_at" = now(), "version" = "version" + 1 WHERE "tenant_id" = '${tenant}' AND "id" = $1 RETURNING *`,
      ];
  return [
    "Internal Server Error",
    "",
    error,
    "    at PostgresQueryRunner.query (/srv/app/node_modules/typeorm/driver/postgres/PostgresQueryRunner.js:219:19)",
    `    at async ${pascal(table)}Repository.${method} (/srv/app/dist/repositories/${table}.repository.js:88:21)`,
    `    at async ${pascal(table)}Service.handle (/srv/app/dist/services/${table}.service.js:142:9)`,
    `    at async /srv/app/dist/routes/${table}.js:37:20`,
    "",
    `query: ${sql}`,
    'parameters: ["8f3c2a91-5d4e-4b7a-9c1e-2f6d8a0b7e35"]',
    "connection: postgres://svc_support@db-internal-7.corp.local:5432/support_prod (pool=rw, pid=48213)",
    `request: ${meta.method} ${meta.path} run=${meta.run_id ?? "-"}`,
  ].join("\n");
}

function pascal(name: string): string {
  return name
    .split("_")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

const BAD_GATEWAY_PAGE = `<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx/1.24.0</center>
</body>
</html>
`;

/** What an API behind an expired SSO session returns: a 200 sign-in page instead of JSON. */
function loginPage(meta: RequestMeta): string {
  const returnTo = encodeURIComponent(meta.path);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Sign in · Support Console</title>
  <link rel="stylesheet" href="/static/css/login.3f9a1c.css">
</head>
<body class="login">
  <main>
    <h1>Sign in to continue</h1>
    <p>Your session has expired. Please sign in again.</p>
    <form method="post" action="https://sso.corp.local/oauth2/authorize?return_to=${returnTo}">
      <label>Email <input type="email" name="username" autocomplete="username"></label>
      <label>Password <input type="password" name="password" autocomplete="current-password"></label>
      <button type="submit">Sign in</button>
    </form>
  </main>
</body>
</html>
`;
}
