import type { ToolSpec } from "./define-tool";

/** Words of a text, lowercased; snake_case names split into their words. */
function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length > 1);
}

/** How strongly a field counts: a word of the name says more than one of the avoid_when text. */
const WEIGHTS = { name: 4, title: 3, does: 2, use_when: 2, side_effects: 1, avoid_when: 0.5 } as const;

/**
 * Ranks tools by intent: the query's words against each tool's name, title and four-part
 * description, weighted by field, by simple term matching (a word also matches a longer word it
 * starts, so "refund" finds "refunds"). Tools that match nothing are left out; ties keep the order
 * given, so the answer is deterministic.
 */
export function rankTools(tools: readonly ToolSpec[], query: string, limit: number): ToolSpec[] {
  const terms = [...new Set(words(query))];
  if (terms.length === 0) return [];
  const scored = tools.map((tool, index) => {
    const fields: [keyof typeof WEIGHTS, string][] = [
      ["name", tool.name],
      ["title", tool.title],
      ["does", tool.description.does],
      ["use_when", tool.description.use_when],
      ["side_effects", tool.description.side_effects],
      ["avoid_when", tool.description.avoid_when],
    ];
    let score = 0;
    for (const [field, text] of fields) {
      const found = words(text);
      for (const term of terms) {
        if (found.some((word) => word === term || (term.length >= 4 && word.startsWith(term)))) {
          score += WEIGHTS[field];
        }
      }
    }
    return { tool, index, score };
  });
  return scored
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit)
    .map((entry) => entry.tool);
}
