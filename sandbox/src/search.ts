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
  return searchByWords(
    policies,
    query,
    (policy) => `${policy.title} ${policy.summary}`,
    (p) => p.policy_id,
  );
}

/**
 * The same help-center search over any records: `textOf` is what a record is searched by, `idOf`
 * breaks ties so equal scores always come back in one order. An empty query lists everything.
 */
export function searchByWords<T>(
  records: readonly T[],
  query: string,
  textOf: (record: T) => string,
  idOf: (record: T) => string,
): T[] {
  const terms = [
    ...new Set(
      words(query)
        .filter((w) => !STOPWORDS.has(w))
        .map(stem),
    ),
  ];
  if (query.trim() === "") return [...records];
  if (terms.length === 0) return [];
  const scored = records.map((record) => {
    const vocabulary = words(textOf(record));
    const score = terms.filter((term) => vocabulary.some((w) => w.startsWith(term))).length;
    return { record, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || idOf(a.record).localeCompare(idOf(b.record)))
    .map((s) => s.record);
}
