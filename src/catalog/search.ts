import type { ToolSpec } from "./define-tool";

/** Words of a text, lowercased; snake_case names split into their words. */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 1);
}

/** How strongly a field counts: a word of the name says more than one of the avoid_when text. */
const WEIGHTS = { name: 4, title: 3, does: 2, use_when: 2, side_effects: 1, avoid_when: 0.5 } as const;

type Fields = readonly (readonly [keyof typeof WEIGHTS, readonly string[]])[];

/** Each tool's words by field, split once per isolate: `find_tools` ranks every granted tool per call. */
const indexes = new WeakMap<ToolSpec, Fields>();

function fieldsOf(tool: ToolSpec): Fields {
  let fields = indexes.get(tool);
  if (!fields) {
    fields = [
      ["name", words(tool.name)],
      ["title", words(tool.title)],
      ["does", words(tool.description.does)],
      ["use_when", words(tool.description.use_when)],
      ["side_effects", words(tool.description.side_effects)],
      ["avoid_when", words(tool.description.avoid_when)],
    ].map(([field, found]) => [field, [...new Set(found)]] as const) as Fields;
    indexes.set(tool, fields);
  }
  return fields;
}

/**
 * Ranks tools by intent: the query's words against each tool's name, title and four-part
 * description, weighted by field and by how few tools mention the word, by simple term matching (a
 * word also matches a longer word it starts, so "refund" finds "refunds"). Tools that match nothing
 * are left out; ties keep the order given, so the answer is deterministic.
 */
export function rankTools(tools: readonly ToolSpec[], query: string, limit: number): ToolSpec[] {
  const terms = [...new Set(words(query))];
  if (terms.length === 0) return [];
  const matches = (found: readonly string[], term: string) =>
    found.some((word) => word === term || (term.length >= 4 && word.startsWith(term)));
  const indexed = tools.map(fieldsOf);
  // A term most tools mention ("order") tells less than one few do ("refund").
  const rarity = new Map(
    terms.map((term) => {
      const mentioning = indexed.filter((fields) => fields.some(([, found]) => matches(found, term))).length;
      return [term, Math.log(1 + tools.length / Math.max(1, mentioning))];
    }),
  );
  const scored = tools.map((tool, index) => {
    let score = 0;
    for (const [field, found] of indexed[index] ?? []) {
      for (const term of terms) {
        if (matches(found, term)) score += WEIGHTS[field] * (rarity.get(term) ?? 0);
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
