// What the probes of `npm run tools -- certify` share: their context, the requests they send as the
// proxy would, how an answer is judged (a 5xx cannot be), and what names a write's effect in its
// answer (the values the postcondition names, else the whole answer).
import type { ProbeResult } from "../../src/catalog/certification";
import { pointerTokens, resolvePointer } from "../../src/catalog/templates";
import type { UpstreamSigningKey } from "../../src/config/signing-keys";
import { canonicalJson, differingFields } from "../../src/core/canonical-json";
import type { Args, CertifyNamespace, CertifyTool, CertifyUpstream } from "./certify-namespace";
import { CertifyError } from "./certify-reach";
import {
  type Answer,
  excerpt,
  requestOf,
  type Signer,
  send,
  validAuthorization,
  waitOf,
} from "./certify-send";

export interface ProbeContext {
  environment: "sandbox" | "production";
  signer: Signer;
  /** A key the proxy never held, under the kid of the proxy's key when one is known. */
  forged: UpstreamSigningKey;
  /** The command's `--header`s, sent with every request. */
  headers: Record<string, string>;
  /** The base URL of an upstream, by name. */
  reach(upstream: string): Promise<string>;
  /** Each effect a probe made, as "issue_refund refund_id re_…", for the report's last word. */
  effects: string[];
  /** Each result as it is known, so a later error still leaves the earlier ones on screen. */
  report(result: ProbeResult): void;
}

export type ProbeId = ProbeResult["probe"];

export const isWrite = (tool: CertifyTool) =>
  tool.declaration.side_effect === "write" || tool.declaration.side_effect === "destructive";
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
export const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300;
export const refused = (answer: Answer) => answer.status >= 400 && answer.status < 500;

/** A 5xx says nothing of keys or credentials: the probe cannot be judged. */
export function judgeable(answer: Answer, what: string): Answer {
  if (answer.status >= 500) throw new CertifyError(`${what} answered ${answer.status}: ${excerpt(answer)}`);
  return answer;
}

/** The `{ result: /pointer }` references of a postcondition: the values that name a write's effect. */
function resultPointers(template: unknown, found: string[] = []): string[] {
  if (Array.isArray(template)) for (const item of template) resultPointers(item, found);
  else if (typeof template === "object" && template !== null) {
    const entries = Object.entries(template);
    const [only] = entries;
    if (entries.length === 1 && only?.[0] === "result" && typeof only[1] === "string") {
      if (!found.includes(only[1])) found.push(only[1]);
    } else for (const [, item] of entries) resultPointers(item, found);
  }
  return found;
}

/** What names a write's effect in its answer: the postcondition's result values, else the whole answer. */
export class Effect {
  private constructor(
    private readonly values: [string, unknown][],
    private readonly whole: unknown,
  ) {}

  static of(tool: CertifyTool, answer: Answer): Effect {
    const postcondition = tool.declaration.postcondition;
    const pointers = postcondition ? resultPointers([postcondition.args, postcondition.expect]) : [];
    if (pointers.length === 0) return new Effect([], answer.body);
    const values = pointers.map((pointer): [string, unknown] => {
      const value = resolvePointer(answer.body, pointer);
      if (value === undefined) {
        throw new CertifyError(
          `the answer (${answer.status}) holds nothing at ${pointer}, which the postcondition names: ${excerpt(answer)}`,
        );
      }
      return [pointerTokens(pointer).at(-1) ?? pointer, value];
    });
    return new Effect(values, null);
  }

  same(other: Effect): boolean {
    return canonicalJson([this.values, this.whole]) === canonicalJson([other.values, other.whole]);
  }

  /** Each value with its name: the postcondition's, else the answer's first `…_id` field. */
  private named(): [string, string][] {
    if (this.values.length > 0) return this.values.map(([name, value]) => [name, String(value)]);
    const id = Object.entries(this.whole ?? {}).find(
      ([name, value]) => name.endsWith("_id") && typeof value === "string",
    );
    return id ? [[id[0], String(id[1])]] : [];
  }

  /** Its values alone: `re_1`. */
  get id(): string {
    return (
      this.named()
        .map(([, value]) => value)
        .join(" ") || "an answer"
    );
  }

  /** Named: `refund_id re_1`. */
  toString(): string {
    return (
      this.named()
        .map(([name, value]) => `${name} ${value}`)
        .join(", ") || "its answer"
    );
  }

  /** How `later` differs: its ids, or (the same ids) the fields of the answer that changed. */
  against(later: Effect): string {
    if (this.id !== later.id) return `${this.id}, ${later.id}`;
    const fields =
      isRecord(this.whole) && isRecord(later.whole) ? differingFields(this.whole, later.whole) : [];
    return `${this.id} answered again with another ${fields.join(", ") || "answer"}`;
  }
}

/**
 * The arguments with one changed, for "another body": the first numeric one plus 1, else the first
 * free-text one (no enum, pattern, format or const in its schema) with a suffix; null when neither.
 */
export function otherArgsOf(tool: CertifyTool, args: Args): { args: Args; field: string } | null {
  const numeric = Object.entries(args).find(([, value]) => typeof value === "number");
  if (numeric) return { args: { ...args, [numeric[0]]: (numeric[1] as number) + 1 }, field: numeric[0] };
  const properties = (tool.declaration.input.properties ?? {}) as Record<string, Record<string, unknown>>;
  const free = Object.entries(args).find(([name, value]) => {
    const schema = properties[name] ?? {};
    return typeof value === "string" && !["enum", "pattern", "format", "const"].some((key) => key in schema);
  });
  if (!free) return null;
  const text = free[1] as string;
  const max =
    typeof properties[free[0]]?.maxLength === "number"
      ? (properties[free[0]]?.maxLength as number)
      : Infinity;
  return { args: { ...args, [free[0]]: `${text.slice(0, Math.max(0, max - 4))} (2)` }, field: free[0] };
}

export function result(
  tool: CertifyTool,
  probe: ProbeId,
  outcome: ProbeResult["result"],
  detail: string,
): ProbeResult {
  return { tool: tool.declaration.name, probe, result: outcome, detail };
}

/** Runs `probe`, naming the tool and the probe in any error it ends in. */
export async function running<T>(tool: CertifyTool, probe: ProbeId, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CertifyError)
      throw new CertifyError(`${tool.declaration.name} ${probe}: ${error.message}`);
    throw error;
  }
}

/** Sends `args` under `key` as the proxy would, with its valid credential. */
export async function sendValid(
  ctx: ProbeContext,
  ns: CertifyNamespace,
  tool: CertifyTool,
  args: Args,
  key: string | null,
) {
  const upstream = upstreamOf(ns, tool);
  const request = requestOf(tool, upstream, args, key);
  const authorization = await validAuthorization(ctx.signer, tool, upstream, request, key);
  return send(await ctx.reach(upstream.name), request, authorization, ctx.headers, waitOf(tool));
}

function upstreamOf(ns: CertifyNamespace, tool: CertifyTool): CertifyUpstream {
  const upstream = ns.upstreams.find((candidate) => candidate.name === tool.declaration.request.upstream);
  if (!upstream) throw new CertifyError(`${tool.declaration.name}'s upstream is not declared`);
  return upstream;
}
