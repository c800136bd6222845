/**
 * "A walk-through with curl" (docs/http-contract.md), sent to a running proxy: the same run, the same
 * two calls, and the answers rendered the way the page shows them (a chosen subset of fields, the rest `…`).
 * Values that differ on every run are normalised so a fresh stack always renders the same text:
 * ids keep their prefix (`call_…`), the deadline's milliseconds left become `…`, and a hint keeps its
 * first sentence.
 */

const OPEN_RUN = { namespace: "support", limits: { max_calls: 10 } };
const LOOKUP = { tool: "lookup_order", args: { order_id: "A1001" } };
const MODEL_LIKE_REFUND = {
  tool: "issue_refund",
  args: { orderId: "A1001", amount_cents: "19.99", reason: "customer changed mind" },
};

/** Stands for a value that differs on every run; rendered as a bare `…`. */
const VOLATILE = "\u2026volatile\u2026";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Answer {
  status: number;
  body: JsonObject;
}

async function post(url: string, bearer: string, body: unknown): Promise<Answer> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as JsonObject };
  } catch {
    throw new Error(`POST ${url} answered ${response.status} with no JSON: ${text.slice(0, 200)}`);
  }
}

const isObject = (value: Json | undefined): value is JsonObject =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function object(value: Json | undefined, what: string): JsonObject {
  if (!isObject(value)) throw new Error(`${what} is not an object: ${JSON.stringify(value)}`);
  return value;
}

/** Replaces what changes from run to run: ids by their prefix and `…`, the deadline left by `…`. */
export function normalise(value: Json, key = ""): Json {
  if (typeof value === "string" && /^(call|run|apr)_[0-9a-f]{8,}$/.test(value))
    return `${value.slice(0, value.indexOf("_") + 1)}\u2026`;
  if (typeof value === "number" && key === "deadline_ms_left") return VOLATILE;
  if (Array.isArray(value)) return value.map((item) => normalise(item));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalise(v, k)]));
  return value;
}

/** Compact JSON, with the volatile stand-in written as a bare `…`. */
function compact(value: Json): string {
  return JSON.stringify(value).replaceAll(JSON.stringify(VOLATILE), "\u2026");
}

/** `"key":value` pairs of `keys`, in the object's own order, then `…` when it has more. */
function fields(value: JsonObject, keys: string[], more: boolean): string {
  const shown = Object.keys(value).filter((key) => keys.includes(key));
  const missing = keys.filter((key) => !(key in value));
  if (missing.length > 0) throw new Error(`the answer has no ${missing.join(", ")}`);
  const pairs = shown.map((key) => `${JSON.stringify(key)}:${compact(value[key] ?? null)}`);
  const rest = more && shown.length < Object.keys(value).length ? ", \u2026" : "";
  return pairs.join(",") + rest;
}

/** A hint's first sentence, then `…` when it goes on. */
function firstSentence(hint: string): string {
  const end = hint.indexOf(". ");
  return end === -1 ? hint : `${hint.slice(0, end + 1)} \u2026`;
}

/** The successful lookup: every field of the envelope, `data` cut to a few. */
export function renderLookup(envelope: JsonObject): string {
  const lines = [
    ["outcome", "tool", "call_id", "environment"],
    ["idempotency_key", "replayed"],
    ["data"],
    ["observed_state"],
  ];
  const listed = lines.flat();
  // Whatever else the envelope holds goes on the last line, so a new field shows in the docs.
  const last = Object.keys(envelope).filter((key) => !listed.includes(key));
  const data = object(envelope.data, "data");
  const render = (keys: string[]) =>
    keys[0] === "data"
      ? `"data":{${fields(data, ["order_id", "customer_id", "status", "total_cents", "refunds"], true)}}`
      : fields(envelope, keys, false);
  return `{${[...lines, last].map(render).join(",\n ")}}`;
}

/** The refused call: the outcome, the error's code and next action, and every problem. */
export function renderValidationError(envelope: JsonObject): string {
  const error = object(envelope.error, "error");
  const problems = (Array.isArray(error.problems) ? error.problems : []).map((problem, i) => {
    const p = object(problem, `error.problems[${i}]`);
    return compact({ ...p, ...(typeof p.hint === "string" ? { hint: firstSentence(p.hint) } : {}) });
  });
  return [
    `{${fields(envelope, ["outcome"], false)}, \u2026,`,
    ` "error":{${fields(error, ["code", "recommended_next_action", "side_effect_confirmed"], false)},`,
    '  "problems":[',
    `   ${problems.join(",\n   ")}]}, \u2026}`,
  ].join("\n");
}

const jsonBlock = (text: string) => `\`\`\`json\n${text}\n\`\`\`\n`;

/** The walk-through's generated regions, by name, from the proxy at `baseUrl` with tenant `acme`. */
export async function walkthroughRegions(
  baseUrl: string,
  tenantKey = "acme-demo-key",
): Promise<Map<string, string>> {
  const base = baseUrl.replace(/\/+$/, "");
  const opened = await post(`${base}/v1/runs`, tenantKey, OPEN_RUN);
  const run = object(opened.body.data, "the run's data");
  if (opened.status !== 201 && opened.status !== 200)
    throw new Error(`opening the run answered ${opened.status}: ${compact(opened.body)}`);
  const calls = `${base}/v1/runs/${String(run.run_id)}/calls`;
  const token = String(run.run_token);
  const lookup = await post(calls, token, LOOKUP);
  if (lookup.status !== 200)
    throw new Error(`lookup_order answered ${lookup.status}: ${compact(lookup.body)}`);
  const refused = await post(calls, token, MODEL_LIKE_REFUND);
  // The walk-through says "HTTP 422" right above the sample.
  if (refused.status !== 422)
    throw new Error(`the model-like refund answered ${refused.status}, not 422: ${compact(refused.body)}`);
  await post(`${base}/v1/runs/${String(run.run_id)}/end`, token, {});
  return new Map([
    ["walkthrough-lookup-order", jsonBlock(renderLookup(object(normalise(lookup.body), "lookup")))],
    [
      "walkthrough-validation-error",
      jsonBlock(renderValidationError(object(normalise(refused.body), "refusal"))),
    ],
  ]);
}
