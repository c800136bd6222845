import { loadCatalog } from "../catalog/catalog";
import { declaredTools } from "../catalog/declared-tool";
import { readResultPage } from "./builtins";
import { declaredNamespaces } from "./catalog.generated";
import { supportTools } from "./support";

/**
 * The catalog this deployment serves: the code tools, the namespaces declared as data
 * (catalog/*.yaml, compiled by `npm run tools -- compile` into a module after every check passed,
 * so no YAML is parsed, no JSON Schema converted and nothing fetched at start), and the built-in
 * tools every namespace gets. Loading it checks every rule; a bad tool stops the worker.
 */
export const catalog = loadCatalog([
  ...supportTools,
  readResultPage("support"),
  ...declaredTools(declaredNamespaces),
  ...declaredNamespaces.map(({ file }) => readResultPage(file.namespace)),
]);
