/**
 * What the project's Markdown tools need to know of a page, without a Markdown library: its
 * headings and the anchors GitHub gives them, a section by its title, and its relative links.
 * Pure (no file system), so the workerd tests can read a page's sections with it too.
 */

export interface Heading {
  level: number;
  /** The heading as rendered: code spans, emphasis and links reduced to their text. */
  text: string;
  /** 1-based line of the heading. */
  line: number;
  /** The anchor GitHub gives it: its slug, with `-1`, `-2`, … for the second and later alike. */
  anchor: string;
}

export interface Link {
  /** The destination as written: `docs/mcp.md#oauth-for-mcp-clients`, `#trace-context`, … */
  target: string;
  /** 1-based line where the link starts. */
  line: number;
  image: boolean;
}

/**
 * The text with every fenced code block and inline code span blanked out (newlines kept, so line
 * numbers stay right): nothing inside code is a heading or a link.
 */
export function withoutCode(markdown: string): string {
  const blank = (text: string) => text.replace(/[^\n]/g, " ");
  const lines = markdown.split("\n");
  let fence: string | null = null;
  const out = lines.map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker) {
      fence = marker;
      return blank(line);
    }
    if (fence !== null) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker)
        fence = null;
      return blank(line);
    }
    return line;
  });
  // Inline code: a run of backticks up to the same run, across a line break but not a blank line.
  return out.join("\n").replace(/(`+)((?:(?!\n[ \t]*\n)[\s\S])*?[^`])\1(?!`)/g, (span) => blank(span));
}

/** A heading's text as GitHub renders it: code spans, emphasis markers and links reduced to text. */
function rendered(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`+/g, "")
    .replace(/(\*\*|__|\*)/g, "")
    .replace(/<[^>]+>/g, "")
    .trim();
}

/**
 * GitHub's slug of a heading's rendered text (as github-slugger makes it): lower case, every
 * character but letters, digits, marks, `-`, `_` and spaces dropped, each space a `-`.
 */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The ATX headings (`#` to `######`) outside code, in order, with their anchors. */
export function headings(markdown: string): Heading[] {
  const seen = new Map<string, number>();
  const lines = markdown.split("\n");
  const prose = withoutCode(markdown).split("\n");
  const found: Heading[] = [];
  prose.forEach((line, index) => {
    const match = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (!match) return;
    // The heading's own text, code spans included (blanked in `prose` only to find headings).
    const original = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(lines[index] ?? "")?.[1] ?? "";
    const text = rendered(original);
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.push({
      level: match[1]?.length ?? 1,
      text,
      line: index + 1,
      anchor: count === 0 ? base : `${base}-${count}`,
    });
  });
  return found;
}

/** Every anchor a link may name in the page: its headings' and any HTML `id`/`name` attribute. */
export function anchors(markdown: string): Set<string> {
  const all = new Set(headings(markdown).map((heading) => heading.anchor));
  for (const match of withoutCode(markdown).matchAll(/<[a-z][^>]*\s(?:id|name)="([^"]+)"/gi)) {
    if (match[1]) all.add(match[1]);
  }
  return all;
}

/**
 * The section titled `title` (its rendered heading text, at any level): from the line after its
 * heading to the next heading of the same or a higher level, or the end of the page. Undefined
 * when the page has no such heading.
 */
export function section(markdown: string, title: string): string | undefined {
  const all = headings(markdown);
  const at = all.findIndex((heading) => heading.text === title);
  const start = all[at];
  if (!start) return undefined;
  const next = all.slice(at + 1).find((heading) => heading.level <= start.level);
  const lines = markdown.split("\n");
  return lines.slice(start.line, next ? next.line - 1 : undefined).join("\n");
}

/** The inline links and images outside code: `[text](target)`, `![alt](target "title")`. */
export function links(markdown: string): Link[] {
  const prose = withoutCode(markdown);
  const found: Link[] = [];
  for (const match of prose.matchAll(
    /(!?)\[(?:[^\][]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g,
  )) {
    const line = prose.slice(0, match.index).split("\n").length;
    found.push({ target: match[2] ?? "", line, image: match[1] === "!" });
  }
  return found;
}

/** Whether a link leaves the project: a scheme (`https:`, `mailto:`) or a protocol-relative `//`. */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");
}
