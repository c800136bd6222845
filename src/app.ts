import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { environmentOf } from "./config/environment";
import { newCallId } from "./core/ids";
import type { AppEnv } from "./http/app-env";
import { lazyRoutes } from "./http/lazy";
import { limitHeaders } from "./http/limits";
import { respond } from "./http/respond";
import { secureResponseHeaders } from "./http/secure-headers";
import { TOOL_CALL_ROUTE } from "./http/tool-call-path";
import { MCP_PATH, PROTECTED_RESOURCE_PATH } from "./mcp/protected-resource";
import { OAUTH_PATHS } from "./oauth/paths";
import { health } from "./routes/health";
import { jwks } from "./routes/jwks";
import { runs } from "./routes/runs";
import { tools } from "./routes/tools";
import { startupCheck } from "./startup";
import { failure } from "./wire/envelope";

export const app = new Hono<AppEnv>();

// The tool call reaches the app without the entry's layer (src/index.ts), so its answers, a refusal
// to start among them, get the same headers here, before anything else runs.
app.use(TOOL_CALL_ROUTE, secureResponseHeaders);

app.use(async (c, next) => {
  const { problems, missing_secrets } = startupCheck(c.env);
  if (problems.length > 0) {
    return respond(
      c,
      failure(
        { call_id: newCallId(), environment: environmentOf(c.env) },
        {
          code: "internal_error",
          outcome: "terminal_failure",
          message: `The proxy is misconfigured: ${problems.join("; ")}.`,
          recommended_next_action: "escalate_to_human",
          details: missing_secrets.length > 0 ? { missing_secrets } : null,
        },
      ),
      // A health check reads "not serving": 503, for load balancers and uptime monitors.
      new URL(c.req.url).pathname === "/healthz" ? { status: 503 } : {},
    );
  }
  await next();
});

app.use(limitHeaders);

app.route("/", health);

// Operator routes are loaded on first use too: an isolate serving agents never evaluates them.
app.get(
  "/v1/runs",
  lazyRoutes("/v1/runs", () => import("./routes/operator-runs").then((part) => part.operatorRuns)),
);
app.route("/v1/runs", runs);
const approvals = lazyRoutes("/v1/approvals", () =>
  import("./routes/approvals").then((part) => part.approvals),
);
app.all("/v1/approvals", approvals);
app.all("/v1/approvals/*", approvals);
app.route("/v1/tools", tools);
const metrics = lazyRoutes("/v1/metrics", () => import("./metrics/route").then((part) => part.metrics));
app.all("/v1/metrics", metrics);
app.all("/v1/metrics/*", metrics);
app.get(
  "/v1/value-usage",
  lazyRoutes("/v1/value-usage", () => import("./routes/value-usage").then((part) => part.valueUsage)),
);
app.get(
  "/v1/audit",
  lazyRoutes("/v1/audit", () => import("./routes/audit").then((part) => part.audit)),
);
// The public keys of upstream credentials, for the APIs behind the tools, and of audit receipts.
app.route("/", jwks);

// Cold paths, loaded on first use: a proxy serving tool calls never evaluates them.
const mcp = lazyRoutes("/", () => import("./mcp/routes").then((part) => part.mcp));
app.all(MCP_PATH, mcp);
app.all(PROTECTED_RESOURCE_PATH, mcp);
app.all(`${PROTECTED_RESOURCE_PATH}/*`, mcp);
const docs = lazyRoutes("/", () => import("./routes/docs").then((part) => part.docs));
app.all("/docs", docs);
app.all("/openapi.json", docs);
const operatorConsole = lazyRoutes("/console", () =>
  import("./console/routes").then((part) => part.operatorConsole),
);
app.all("/console", operatorConsole);
app.all("/console/*", operatorConsole);
// The OAuth consent page; the provider (src/oauth/entry.ts) passes /authorize on to it.
const consent = lazyRoutes(OAUTH_PATHS.authorize, () =>
  import("./console/consent").then((part) => part.consent),
);
app.all(OAUTH_PATHS.authorize, consent);

app.notFound((c) =>
  respond(
    c,
    failure(
      { call_id: newCallId(), environment: environmentOf(c.env) },
      {
        code: "not_found",
        message: `No route ${c.req.method} ${new URL(c.req.url).pathname}. See the HTTP contract (docs/http-contract.md) or GET /openapi.json.`,
        recommended_next_action: "stop",
      },
    ),
  ),
);

app.onError((error, c) => {
  const ctx = { call_id: newCallId(), environment: environmentOf(c.env) };
  // Hono's JSON validator throws on a body that is not JSON; that is the caller's mistake, not ours.
  if (error instanceof HTTPException && error.status < 500) {
    return respond(
      c,
      failure(ctx, {
        code: "validation_error",
        message: "The request body is not valid JSON.",
        problems: [
          {
            field: "body",
            reason: "not valid JSON",
            hint: "Send a JSON object with content-type application/json.",
          },
        ],
      }),
      { status: error.status },
    );
  }
  console.error("unhandled error", error);
  return respond(
    c,
    failure(ctx, { code: "internal_error", message: "The proxy failed unexpectedly. Retry shortly." }),
  );
});
