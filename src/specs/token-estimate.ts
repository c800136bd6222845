/**
 * Approximate tokens of a spec as it is sent: one token per four characters of its compact JSON,
 * rounded up. No tokenizer ships in the worker (one would outweigh the whole proxy); on the demo
 * namespace this rule lands within 8% of OpenAI's o200k_base and cl100k_base counts and of
 * Anthropic's published legacy tokenizer, always slightly above (test/workerd/tool-specs.test.ts checks it).
 * It counts the definitions only, not the fixed tool-use preamble a provider adds to its prompt.
 */
export const TOKEN_ESTIMATE_METHOD = "ceil(characters of the compact JSON / 4)";

export function estimateTokens(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 4);
}
