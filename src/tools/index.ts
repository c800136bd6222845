import { lazyCatalog } from "../catalog/catalog";
import { declaredTools } from "../catalog/declared-tool";
import type { ToolSpec } from "../catalog/define-tool";
import { declaredNamespaces, servedCatalogVersion, servedToolVersions } from "../generated/catalog";
import { readResultPage } from "./builtins";
import { findTools, useTool } from "./discovery";

/**
 * The catalog this deployment serves: the namespaces declared as data (catalog/*.yaml, compiled by
 * `npm run tools -- compile` into a module after every check passed, so no YAML is parsed, no JSON
 * Schema converted and nothing fetched at start), each with the built-in tools every namespace
 * gets. It loads on first use, not when the isolate starts; a tool that breaks a rule throws its
 * CatalogError at every use, and the proxy refuses all traffic naming it (src/startup.ts).
 *
 * Loading runs the structural rules only (names, classes, timeouts, upstreams, postconditions,
 * namespaces), not the walks over each tool's zod schemas (the arguments an effect identity or
 * value names among them), which would build every schema: the
 * generated module is written only after `catalogProblems` with every rule passed over the very
 * same zod source (scripts/tools/catalog-check.ts evaluates the text it then writes) and over these
 * built-in tools, and `npm run lint` fails when the module is not what compile would write now.
 * A schema is built on its tool's first use; the catalog's version and each of its tools' were
 * computed by compile too.
 */
export const catalog = lazyCatalog(
  () =>
    declaredNamespaces.flatMap((namespace) => [
      ...declaredTools([namespace]),
      readResultPage(namespace.file.namespace),
    ]),
  undefined,
  "structure",
  servedCatalogVersion,
  servedToolVersions,
);

const discovery = new Map<string, readonly ToolSpec[]>();

/**
 * `find_tools` and `use_tool` of a run whose home is `namespace`: listed only by runs opened with a
 * subset of tools, which reach the rest of their grants through them.
 */
export function discoveryTools(namespace: string): readonly ToolSpec[] {
  let tools = discovery.get(namespace);
  if (!tools) {
    tools = [findTools(namespace), useTool(namespace)];
    discovery.set(namespace, tools);
  }
  return tools;
}
