import { canonicalJson } from "./canonical-json";
import { sha256Hex } from "./digest";

export interface KeyInput {
  tenant: string;
  runId: string;
  tool: string;
  /** The arguments after parsing, so defaults and coercions are part of what is compared. */
  args: Record<string, unknown>;
  /** An orchestrator-supplied nonce that makes two identical calls distinct; never from the model. */
  intent?: string | null;
}

/**
 * The idempotency key of a write: SHA-256 over tenant, run, tool and canonical arguments.
 * Derived by the proxy, never taken from the model, so a retry of the same intent always maps to
 * the same key and a different intent never collides with it. `argsJson`, when given, is
 * `canonicalJson(input.args)` already written (for the call's digest): the material is the same
 * text `canonicalJson([tenant, run, tool, args, intent])` writes, without walking the arguments again.
 */
export async function deriveIdempotencyKey(
  input: KeyInput,
  argsJson: string = canonicalJson(input.args),
): Promise<string> {
  const material = `[${canonicalJson(input.tenant)},${canonicalJson(input.runId)},${canonicalJson(input.tool)},${argsJson},${canonicalJson(input.intent ?? null)}]`;
  return `idk_${await sha256Hex(material)}`;
}

/**
 * Identifies "the same call" for repeat detection: tool + canonical arguments, any side effect;
 * the hash of `canonicalJson([tool, args])`. `argsJson`, when given, is `canonicalJson(args ?? null)`.
 */
export function callDigest(
  tool: string,
  args: unknown,
  argsJson: string = canonicalJson(args ?? null),
): Promise<string> {
  return sha256Hex(`[${canonicalJson(tool)},${argsJson}]`);
}
