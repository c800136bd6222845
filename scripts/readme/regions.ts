import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * Generated regions of the project's Markdown: `<!-- generated:<name> -->` on its own line, the
 * generated text, then `<!-- /generated -->`. A region may sit in README.md or in any page under
 * docs/, and may move between them: it is found by name, and each name must occur exactly once.
 */

const REGION = /^<!-- generated:([a-z0-9-]+) -->\n([\s\S]*?)^<!-- \/generated -->$/gm;

export interface Region {
  name: string;
  file: string;
  body: string;
}

/** README.md and every Markdown page under docs/, relative to `root`. */
export function markdownFiles(root: string): string[] {
  const files = ["README.md"];
  const walk = (dir: string) => {
    if (!existsSync(join(root, dir))) return;
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk("docs");
  return files;
}

/** Every generated region of the files, by name; a name found twice is an error. */
export function findRegions(root: string, files = markdownFiles(root)): Map<string, Region> {
  const regions = new Map<string, Region>();
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    for (const match of text.matchAll(REGION)) {
      const name = match[1] ?? "";
      const seen = regions.get(name);
      if (seen) throw new Error(`generated region "${name}" is in ${seen.file} and again in ${file}`);
      regions.set(name, { name, file: relative(root, join(root, file)), body: match[2] ?? "" });
    }
  }
  return regions;
}

/** Writes `body` into the region `name` of `file`. */
export function writeRegion(root: string, file: string, name: string, body: string): void {
  const path = join(root, file);
  const text = readFileSync(path, "utf8");
  const start = `<!-- generated:${name} -->\n`;
  const at = text.indexOf(start);
  const end = text.indexOf("<!-- /generated -->", at);
  if (at === -1 || end === -1) throw new Error(`${file} has no complete generated region "${name}"`);
  writeFileSync(path, text.slice(0, at + start.length) + body + text.slice(end));
}

/**
 * A line diff of `before` (what the file holds) against `after` (what the generator writes):
 * `-` lines to remove, `+` lines to add, two lines of context around each change.
 */
export function lineDiff(before: string, after: string): string {
  const a = before.split("\n");
  const b = after.split("\n");
  // Longest common subsequence table, from the end; regions are a few dozen lines.
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = lcs[i] as number[];
      row[j] =
        a[i] === b[j] ? (lcs[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(lcs[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const lines: { mark: " " | "-" | "+"; text: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ mark: " ", text: a[i++] ?? "" });
      j++;
    } else if (i < a.length && (j >= b.length || (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      lines.push({ mark: "-", text: a[i++] ?? "" });
    } else {
      lines.push({ mark: "+", text: b[j++] ?? "" });
    }
  }
  const near = (k: number) => lines.slice(Math.max(0, k - 2), k + 3).some((line) => line.mark !== " ");
  return lines
    .filter((_, k) => near(k))
    .map((line) => `${line.mark} ${line.text}`)
    .join("\n");
}
