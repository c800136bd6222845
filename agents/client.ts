import { type Envelope, envelopeSchema } from "../src/wire/envelope";
import type { SpecFormat } from "../src/wire/requests";

/**
 * REST clients of the proxy, as an orchestrator and an agent loop use it over HTTP. The orchestrator
 * holds the tenant key and opens runs; the agent only ever gets a `RunClient`, which holds the run
 * token. Every call the agent makes is logged here, by the client, so an evaluation counts what was
 * really sent rather than what an agent says it did.
 */

/** One tool call as it went over the wire. */
export interface CallRecord {
  n: number;
  tool: string;
  args: unknown;
  /** X-Call-Intent, when the orchestrator's plan marks two identical writes as distinct. */
  intent: string | null;
  /** `Prefer: wait=<seconds>`, when the call asked to wait for a pending approval's decision. */
  wait_s?: number;
  http_status: number;
  envelope: Envelope;
  started_at: string;
  ms: number;
}

/** A scenario step as `POST /v1/runs` takes it (src/scenarios/scenario.ts): sandbox only. */
export interface ScenarioStepBody {
  mode: string;
  tool?: string;
  path_prefix?: string;
  times?: number;
  hang_ms?: number;
  retry_after_s?: number;
}

export interface OpenRunBody {
  namespace: string;
  limits?: Partial<Record<"max_calls" | "max_writes" | "max_destructive" | "deadline_s", number>>;
  scenario?: readonly ScenarioStepBody[];
  /** Open with only these tools (names, or namespace.tool). */
  tools?: readonly string[];
}

export interface OpenedRun {
  run_id: string;
  run_token: string;
  /** The run-open answer's data: limits, budget, scenario, tool specs. */
  data: Record<string, unknown>;
}

/** A body that is not an envelope means the proxy broke its contract: that is an exception, not data. */
async function readEnvelope(response: Response): Promise<Envelope> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(
      `the proxy answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
    );
  }
  const parsed = envelopeSchema().safeParse(json);
  if (!parsed.success) {
    throw new Error(`the proxy answered ${response.status} with a body that is not an envelope`);
  }
  return parsed.data;
}

export class ProxyClient {
  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
  }

  /** `POST /v1/runs` with a tenant key; throws when the proxy refuses, with the envelope's reason. */
  async openRun(tenantKey: string, body: OpenRunBody): Promise<OpenedRun> {
    const response = await fetch(`${this.baseUrl}/v1/runs`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenantKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const envelope = await readEnvelope(response);
    if (envelope.outcome !== "success") {
      const problems = envelope.error?.problems.map((problem) => `${problem.field}: ${problem.reason}`);
      throw new Error(`opening a run failed: ${envelope.error?.message} ${problems?.join("; ") ?? ""}`);
    }
    const data = envelope.data as OpenedRun["data"] & { run_id: string; run_token: string };
    return { run_id: data.run_id, run_token: data.run_token, data };
  }

  /** A client for one run, holding only its run token. */
  forRun(run: Pick<OpenedRun, "run_id" | "run_token">): RunClient {
    return new RunClient(this.baseUrl, run.run_id, run.run_token);
  }
}

export class RunClient {
  readonly runId: string;
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #log: CallRecord[] = [];

  constructor(baseUrl: string, runId: string, token: string) {
    this.#baseUrl = baseUrl;
    this.runId = runId;
    this.#token = token;
  }

  /** Every call made through this client, in the order they were sent. */
  get log(): readonly CallRecord[] {
    return this.#log;
  }

  /**
   * `POST /v1/runs/{id}/calls`. Failures are envelopes too; only a broken contract throws. `waitS`
   * asks a call whose approval is pending to wait that long for the decision (`Prefer: wait`), a
   * poll that costs nothing however soon it comes.
   */
  async call(
    tool: string,
    args: unknown,
    opts: { intent?: string | null; waitS?: number } = {},
  ): Promise<Envelope> {
    const n = this.#log.length + 1;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#token}`,
      "content-type": "application/json",
    };
    if (opts.intent) headers["x-call-intent"] = opts.intent;
    if (opts.waitS !== undefined) headers.prefer = `wait=${opts.waitS}`;
    const started = Date.now();
    const response = await fetch(`${this.#baseUrl}/v1/runs/${this.runId}/calls`, {
      method: "POST",
      headers,
      body: JSON.stringify({ tool, args }),
    });
    const envelope = await readEnvelope(response);
    this.#log.push({
      n,
      tool,
      args,
      intent: opts.intent ?? null,
      ...(opts.waitS !== undefined ? { wait_s: opts.waitS } : {}),
      http_status: response.status,
      envelope,
      started_at: new Date(started).toISOString(),
      ms: Date.now() - started,
    });
    return envelope;
  }

  /** `GET /v1/tools?format=`: the run's tool specs, ready for a model framework. */
  async toolSpecs<T = unknown>(format: SpecFormat): Promise<T[]> {
    const envelope = await this.#get(`/v1/tools?format=${format}`);
    return ((envelope.data as { tools?: T[] } | null)?.tools ?? []) as T[];
  }

  /** `GET /v1/runs/{id}`: state, budget left, taint. */
  async status(): Promise<Record<string, unknown>> {
    return ((await this.#get(`/v1/runs/${this.runId}`)).data ?? {}) as Record<string, unknown>;
  }

  /** `GET /v1/runs/{id}/trace`: every dispatch of the run, as the proxy recorded it. */
  async trace(): Promise<Array<Record<string, unknown>>> {
    const data = (await this.#get(`/v1/runs/${this.runId}/trace`)).data as {
      entries?: Array<Record<string, unknown>>;
    } | null;
    return data?.entries ?? [];
  }

  async end(): Promise<void> {
    const response = await fetch(`${this.#baseUrl}/v1/runs/${this.runId}/end`, {
      method: "POST",
      headers: { authorization: `Bearer ${this.#token}` },
    });
    await readEnvelope(response);
  }

  async #get(path: string): Promise<Envelope> {
    const response = await fetch(`${this.#baseUrl}${path}`, {
      headers: { authorization: `Bearer ${this.#token}` },
    });
    return readEnvelope(response);
  }
}
