import * as z from "zod";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";
import type { ToolSpec } from "./define-tool";

/**
 * A tool's version: a digest of its contract, the part of a tool a run or an approval depends on.
 * A run pins the version of each tool it was shown or called, and an approval is bound to the one
 * its call was asked under, so a change to one tool affects only the runs and approvals of that
 * tool (docs/own-api.md, "Tool versions"). The contract is cut into parts, each digested on its
 * own, so what changed can be said in words.
 *
 * A declared tool's functions (its request mapping, policies, postcondition, decision context,
 * settling read) are made from data (`declared`), which is what the digest reads; a tool written in
 * code bumps its `version` when one of its functions changes meaning, and the digest reads that.
 * Its deprecation is not part of it: a notice changes no call, and is announced on every answer
 * instead (`deprecation.ts`).
 */
export const CONTRACT_PARTS = [
  "version",
  "class",
  "description",
  "input",
  "output",
  "upstream",
  "policies",
  "postcondition",
  "trust",
  "approval",
] as const;
export type ContractPart = (typeof CONTRACT_PARTS)[number];

/** A tool's version and the digest of each part of its contract (8 hex digits each). */
export interface ToolVersion {
  version: string;
  parts: Readonly<Record<ContractPart, string>>;
}

/** What a change to each part means, in words a model can act on. */
export const PART_WORDS: Readonly<Record<ContractPart, string>> = {
  version: "its declared version",
  class: "what calling it does (its side-effect class)",
  description: "its description",
  input: "the arguments it takes",
  output: "what it returns",
  upstream: "where and how its calls are sent",
  policies: "the business rules its calls must pass",
  postcondition: "how its effect is checked afterwards",
  trust: "which of its results are third-party text or masked",
  approval: "who approves its calls and what they are shown",
};

/** A function's presence, for a tool written in code: its meaning is its `version`'s to track. */
const present = (value: unknown) => value !== null && value !== undefined;

/** Each part of a tool's contract as canonical JSON: the text its digests are taken of. */
export function toolContractTexts(tool: ToolSpec): Record<ContractPart, string> {
  const declared = tool.declared ?? null;
  const upstream = tool.upstream;
  const parts: Record<ContractPart, unknown> = {
    version: tool.version,
    class: { side_effect: tool.side_effect, open_world: tool.open_world, builtin: present(tool.builtin) },
    description: { title: tool.title, ...tool.description },
    input: {
      schema: z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }),
      sensitive_args: tool.sensitive_args,
    },
    output: {
      schema: z.toJSONSchema(tool.output, { io: "output", unrepresentable: "any" }),
      max_result_bytes: tool.max_result_bytes,
    },
    upstream:
      upstream === null
        ? null
        : {
            binding: upstream.binding,
            base: upstream.base ?? null,
            credential: upstream.credential ?? null,
            remote: upstream.remote ?? null,
            idempotency: upstream.idempotency ?? null,
            request: declared?.request ?? null,
            timeout_ms: tool.timeout_ms,
            settle: declared ? (declared.settle ?? null) : (tool.settle?.tool ?? null),
          },
    policies: {
      rules: declared ? declared.policies : tool.policy.length,
      effect: tool.effect,
      value: tool.value,
    },
    postcondition: {
      observe: declared ? (declared.postcondition ?? null) : (tool.observe?.tool ?? null),
      no_postcondition: tool.no_postcondition,
      freshness: declared ? (declared.freshness ?? null) : present(tool.freshness),
    },
    trust: { untrusted: tool.untrusted, trusted_text: tool.trusted_text, sensitive: tool.sensitive },
    approval: {
      roles: tool.approval_roles,
      sla_ms: tool.approval_sla_ms,
      context: declared ? (declared.decision_context ?? null) : (tool.decision_context?.tool ?? null),
      dry_run: tool.dry_run,
    },
  };
  const texts = {} as Record<ContractPart, string>;
  for (const part of CONTRACT_PARTS) texts[part] = canonicalJson(parts[part]);
  return texts;
}

/** Every part's text, one after another: what the whole version is the digest of. */
const whole = (texts: Record<ContractPart, string>) => CONTRACT_PARTS.map((part) => texts[part]).join("\n");

function assemble(digests: readonly string[], all: string): ToolVersion {
  const parts = {} as Record<ContractPart, string>;
  CONTRACT_PARTS.forEach((part, index) => {
    parts[part] = (digests[index] ?? "").slice(0, 8);
  });
  return { version: `tv_${all.slice(0, 16)}`, parts };
}

/** A tool's version with a synchronous SHA-256 in hex (compile's, in Node). */
export function toolVersionWith(tool: ToolSpec, hash: (text: string) => string): ToolVersion {
  const texts = toolContractTexts(tool);
  return assemble(
    CONTRACT_PARTS.map((part) => hash(texts[part])),
    hash(whole(texts)),
  );
}

async function compute(tool: ToolSpec): Promise<ToolVersion> {
  const texts = toolContractTexts(tool);
  const digests = await Promise.all(CONTRACT_PARTS.map((part) => sha256Hex(texts[part])));
  return assemble(digests, await sha256Hex(whole(texts)));
}

/** Versions computed in this isolate, by tool: each is a pure function of the tool's contract. */
const computed = new WeakMap<ToolSpec, Promise<ToolVersion>>();

/** A tool's version, computed once per tool object: its schemas are converted to JSON Schema for it. */
export function computeToolVersion(tool: ToolSpec): Promise<ToolVersion> {
  let version = computed.get(tool);
  if (!version) {
    version = compute(tool);
    computed.set(tool, version);
  }
  return version;
}

/** The parts whose digests differ between two versions of one tool, in contract order. */
export function changedParts(
  before: Readonly<Record<string, string>>,
  after: Readonly<Record<string, string>>,
): ContractPart[] {
  return CONTRACT_PARTS.filter((part) => before[part] !== after[part]);
}
