import { html } from "hono/html";
import type { JsonSchema } from "./json-schema";

/**
 * The docs page: the OpenAPI document rendered as one self-contained HTML page. No script, font,
 * stylesheet or image is loaded from anywhere, so `npm start` serves it offline; `hono/html`
 * escapes every interpolated value, so nothing in a description can inject markup.
 */

type Html = ReturnType<typeof html>;

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:980px;padding:1rem 1.5rem;color:#1d2330}
h1{margin-bottom:.2rem}h2{border-bottom:1px solid #d8dce4;padding-bottom:.2rem;margin-top:2rem}
code,pre{font:13px/1.4 ui-monospace,monospace}pre{background:#f4f6f9;padding:.7rem;overflow:auto;border-radius:4px}
.op{border:1px solid #d8dce4;border-radius:6px;padding:.6rem .9rem;margin:.8rem 0}
.m{display:inline-block;min-width:4.2rem;font-weight:700;text-transform:uppercase}
.get{color:#0a6b3d}.post{color:#1f4fbf}.delete{color:#a32020}
table{border-collapse:collapse;width:100%}td,th{border-top:1px solid #e4e7ed;padding:.25rem .4rem;text-align:left;vertical-align:top}
.muted{color:#5b6475}nav a{margin-right:1rem}
`;

/**
 * The tenant key the quick start shows: the demo key of the committed sandbox example, which is
 * valid only there; any other environment shows a placeholder, so no page ever suggests that a
 * demo key opens runs in production.
 */
export const SANDBOX_DEMO_TENANT_KEY = "acme-demo-key";
export const TENANT_KEY_PLACEHOLDER = "<tenant key>";

export interface DocsPageOptions {
  /** The key the quick start's commands use: SANDBOX_DEMO_TENANT_KEY or TENANT_KEY_PLACEHOLDER. */
  tenantKey: string;
}

/** The quick start's commands, against the origin the page was read from. */
function quickStart(origin: string, tenantKey: string): string {
  return `# 1. Open a run with a tenant key (the orchestrator holds it, never the model)
curl -s -X POST ${origin}/v1/runs \\
  -H 'Authorization: Bearer ${tenantKey}' -H 'content-type: application/json' \\
  -d '{"namespace":"support"}'

# 2. Call a tool with the run token
curl -s -X POST ${origin}/v1/runs/$RUN_ID/calls \\
  -H "Authorization: Bearer $RUN_TOKEN" -H 'content-type: application/json' \\
  -d '{"tool":"lookup_order","args":{"order_id":"A1001"}}'

# 3. Or hand the run to an MCP client: URL ${origin}/mcp,
#    header Authorization: Bearer $RUN_TOKEN

# 4. Tool specs for your framework (openai | openai-responses | anthropic | gemini | mcp | jsonschema)
curl -s '${origin}/v1/tools?namespace=support&format=openai' \\
  -H 'Authorization: Bearer ${tenantKey}'`;
}

/** The origin the document names as its server (openapi.ts sets the request's). */
function serverOrigin(document: JsonSchema): string {
  const servers = (document.servers ?? []) as Array<{ url?: unknown }>;
  return typeof servers[0]?.url === "string" ? servers[0].url : "";
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

/** OpenAPI descriptions are CommonMark; of it the page renders only `code spans`, escaped like all text. */
function prose(text: unknown): Html[] {
  return String(text ?? "")
    .split("`")
    .map((part, index) => (index % 2 === 1 ? html`<code>${part}</code>` : html`${part}`));
}
const record = (value: unknown) => (value ?? {}) as Record<string, JsonSchema>;

function schemaName(schema: unknown): string | undefined {
  const found = JSON.stringify(schema ?? null).match(/#\/components\/schemas\/(\w+)/g);
  return found?.map((text) => text.split("/").pop()).join(" + ");
}

function parametersTable(parameters: unknown): Html | string {
  const list = (parameters ?? []) as JsonSchema[];
  if (list.length === 0) return "";
  return html`<table>
    <tr><th>parameter</th><th>in</th><th>required</th><th>schema</th><th>description</th></tr>
    ${list.map(
      (p) => html`<tr>
        <td><code>${String(p.name)}</code></td><td>${String(p.in)}</td><td>${p.required ? "yes" : "no"}</td>
        <td><code>${JSON.stringify(p.schema)}</code></td><td>${prose(p.description)}</td>
      </tr>`,
    )}
  </table>`;
}

function operationBlock(path: string, method: string, op: JsonSchema): Html {
  const security = (op.security as Array<Record<string, unknown>>).flatMap((entry) => Object.keys(entry));
  const body = record(record(record(op.requestBody).content)["application/json"]).schema;
  return html`<div class="op" id="${String(op.operationId)}">
    <div><span class="m ${method}">${method}</span> <code>${path}</code> — ${String(op.summary)}</div>
    <p>${prose(op.description)}</p>
    <p class="muted">Credential: ${security.length > 0 ? security.join(" or ") : "none"}${
      body ? html` · Body: <a href="#schema-${schemaName(body)}">${schemaName(body)}</a>` : ""
    }</p>
    ${parametersTable(op.parameters)}
    <table>
      <tr><th>status</th><th>answer</th></tr>
      ${Object.entries(record(op.responses)).map(
        ([status, response]) => html`<tr><td>${status}</td><td>${prose(response.description)}</td></tr>`,
      )}
    </table>
  </div>`;
}

/** The whole page for an OpenAPI 3.1 document; its quick start uses the document's server. */
export function renderDocsPage(document: JsonSchema, options: DocsPageOptions): Html {
  const info = record(document.info);
  const components = record(document.components);
  const tags = (document.tags ?? []) as Array<{ name: string; description: string }>;
  const operations = Object.entries(record(document.paths)).flatMap(([path, methods]) =>
    Object.entries(record(methods)).map(([method, op]) => ({ path, method, op })),
  );
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${String(info.title)} — API</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${String(info.title)}</h1>
<p>${prose(info.description)}</p>
<nav><a href="/openapi.json">openapi.json</a>${tags.map((tag) => html`<a href="#tag-${tag.name}">${tag.name}</a>`)}<a href="#schemas">schemas</a></nav>
<h2>Quick start</h2>
<pre>${quickStart(serverOrigin(document), options.tenantKey)}</pre>
<h2>Credentials</h2>
<table>${Object.entries(record(components.securitySchemes)).map(
    ([name, scheme]) => html`<tr><td><code>${name}</code></td><td>${String(scheme.description)}</td></tr>`,
  )}</table>
${tags.map(
  (tag) => html`<h2 id="tag-${tag.name}">${tag.name}</h2><p class="muted">${tag.description}</p>
  ${operations
    .filter(({ op }) => (op.tags as string[]).includes(tag.name))
    .map(({ path, method, op }) => operationBlock(path, method, op))}`,
)}
<h2 id="schemas">Schemas</h2>
${Object.entries(record(components.schemas)).map(
  ([name, schema]) => html`<h3 id="schema-${name}">${name}</h3><pre>${pretty(schema)}</pre>`,
)}
</body>
</html>`;
}
