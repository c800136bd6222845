import { loadCatalog } from "../catalog/catalog";
import { declaredTools } from "../catalog/declared-tool";
import type { ToolSpec } from "../catalog/define-tool";
import { readResultPage } from "./builtins";
import { declaredNamespaces } from "./catalog.generated";
import { findTools, useTool } from "./discovery";

/**
 * The catalog this deployment serves: the namespaces declared as data (catalog/*.yaml, compiled by
 * `npm run tools -- compile` into a module after every check passed, so no YAML is parsed, no JSON
 * Schema converted and nothing fetched at start), each with the built-in tools every namespace
 * gets. Loading it checks every rule; a bad tool stops the worker.
 */
export const catalog = loadCatalog(
  declaredNamespaces.flatMap((namespace) => [
    ...declaredTools([namespace]),
    readResultPage(namespace.file.namespace),
  ]),
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
