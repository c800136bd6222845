// What `check` asks of a namespace's `default_tools` as written: each entry names one of the
// file's own tools, once. How many it names, and whether a namespace must declare one at all, are
// the catalog's rules (src/catalog/default-tools.ts), which code tools pass too.
import type { CatalogFile } from "../../src/catalog/declaration";

type Report = (path: PropertyKey[], problem: string) => void;

export function defaultToolsRules(file: Pick<CatalogFile, "default_tools" | "tools">, report: Report): void {
  const names = file.tools.map((tool) => tool.name);
  const listed = file.default_tools ?? [];
  listed.forEach((name, index) => {
    if (!names.includes(name)) {
      report(
        ["default_tools", index],
        `"${name}" is not a tool of this namespace; name one of its tools, such as ${names[0] ?? "its first"}`,
      );
    } else if (listed.indexOf(name) !== index) {
      report(["default_tools", index], `names "${name}" twice`);
    }
  });
}
