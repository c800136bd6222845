import type { RefundPolicy } from "./model";

/**
 * Keyword search over policies, shaped like a small help-center search: any query word may match
 * (so "refund for a damaged item" finds something), results ranked by how many words matched.
 */

const STOPWORDS = new Set([
  "a",
  "an",
  "and",
  "are",
  "can",
  "do",
  "for",
  "how",
  "i",
  "in",
  "is",
  "it",
  "my",
  "of",
  "on",
  "or",
  "the",
  "to",
  "what",
  "when",
  "with",
]);

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Crude plural folding so "refunds" finds "refund" and "items" finds "item". */
function stem(word: string): string {
  return word.length > 3 && word.endsWith("s") ? word.slice(0, -1) : word;
}

export function searchPolicies(policies: readonly RefundPolicy[], query: string): RefundPolicy[] {
  const terms = [
    ...new Set(
      words(query)
        .filter((w) => !STOPWORDS.has(w))
        .map(stem),
    ),
  ];
  if (query.trim() === "") return [...policies];
  if (terms.length === 0) return [];
  const scored = policies.map((policy) => {
    const vocabulary = words(`${policy.title} ${policy.summary}`);
    const score = terms.filter((term) => vocabulary.some((w) => w.startsWith(term))).length;
    return { policy, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.policy.policy_id.localeCompare(b.policy.policy_id))
    .map((s) => s.policy);
}
