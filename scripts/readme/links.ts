import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { anchors, isExternal, links } from "./markdown";

/**
 * The relative links of the project's Markdown, checked the way GitHub would follow them: the file
 * (or folder) a link names exists in the project, and an anchor into a Markdown page is one of that
 * page's heading anchors. External links (`https:`, `mailto:`) are not followed.
 */

export interface LinkProblem {
  /** `docs/mcp.md:247`, relative to the project's root. */
  at: string;
  target: string;
  reason: string;
}

const SKIPPED = new Set(["node_modules", "dist", "reports", "screenshots", "coverage"]);

/** README.md at the root and every Markdown page of the project's folders (not dependencies, builds or dot-folders). */
export function projectMarkdown(root: string): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (entry.name.startsWith(".") || SKIPPED.has(entry.name)) continue;
      const path = dir === "" ? entry.name : join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".md")) files.push(path);
    }
  };
  walk("");
  return files.sort();
}

/** Every broken relative link or anchor of `files` (paths relative to `root`). */
export function checkLinks(root: string, files = projectMarkdown(root)): LinkProblem[] {
  const anchorsOf = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    let found = anchorsOf.get(file);
    if (!found) {
      found = anchors(readFileSync(join(root, file), "utf8"));
      anchorsOf.set(file, found);
    }
    return found;
  };
  const problems: LinkProblem[] = [];
  for (const file of files) {
    for (const link of links(readFileSync(join(root, file), "utf8"))) {
      if (isExternal(link.target)) continue;
      const at = `${file.split(sep).join("/")}:${link.line}`;
      const hash = link.target.indexOf("#");
      const path = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
      if (link.target === "") {
        problems.push({ at, target: link.target, reason: "the link has no destination" });
        continue;
      }
      const resolved = path === "" ? file : relative(root, join(root, dirname(file), path));
      if (resolved.startsWith("..") || !existsSync(join(root, resolved))) {
        problems.push({ at, target: link.target, reason: `${resolved.split(sep).join("/")} does not exist` });
        continue;
      }
      if (anchor === undefined || !resolved.endsWith(".md") || statSync(join(root, resolved)).isDirectory())
        continue;
      if (!anchorsIn(resolved).has(anchor)) {
        const page = resolved.split(sep).join("/");
        problems.push({
          at,
          target: link.target,
          reason: `${page} has no heading whose anchor is #${anchor} (its anchors: ${[...anchorsIn(resolved)].map((a) => `#${a}`).join(", ") || "none"})`,
        });
      }
    }
  }
  return problems;
}
