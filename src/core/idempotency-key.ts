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
 * the same key and a different intent never collides with it.
 */
export async function deriveIdempotencyKey(input: KeyInput): Promise<string> {
  const material = canonicalJson([input.tenant, input.runId, input.tool, input.args, input.intent ?? null]);
  return `idk_${await sha256Hex(material)}`;
}

/** Identifies "the same call" for repeat detection: tool + canonical arguments, any side effect. */
export function callDigest(tool: string, args: unknown): Promise<string> {
  return sha256Hex(canonicalJson([tool, args ?? null]));
}
