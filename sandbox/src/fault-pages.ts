import type { RequestMeta } from "./journal";

/**
 * The bodies of the faults that answer instead of the application, written the way real ones
 * look, leaks included: they are what the proxy has to survive and sanitize.
 */

/** An unhandled exception rendered by a framework left in debug mode: stack, SQL and a private host. */
export function stackTrace(meta: RequestMeta): string {
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

export const BAD_GATEWAY_PAGE = `<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx/1.24.0</center>
</body>
</html>
`;

/** What an API behind an expired SSO session returns: a 200 sign-in page instead of JSON. */
export function loginPage(meta: RequestMeta): string {
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
