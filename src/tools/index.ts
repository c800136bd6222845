import { loadCatalog } from "../catalog/catalog";
import type { CatalogFile } from "../catalog/declaration";
import { declaredTools } from "../catalog/declared-tool";
import { readResultPage } from "./builtins";
import compiled from "./catalog.generated.json";
import { supportTools } from "./support";

/**
 * The namespaces declared as data (catalog/*.yaml), as `npm run tools -- compile` wrote them after
 * every check passed: JSON bundled with the Worker, so no YAML is parsed and nothing is fetched at
 * start. The cast stands in for a parse the build already did (JSON imports type their strings wide).
 */
const declared = compiled as unknown as CatalogFile[];

/**
 * The catalog this deployment serves: the code tools, the declared namespaces, and the built-in
 * tools every namespace gets. Loading it checks every rule; a bad tool stops the worker.
 */
export const catalog = loadCatalog([
  ...supportTools,
  readResultPage("support"),
  ...declaredTools(declared),
  ...declared.map((file) => readResultPage(file.namespace)),
]);
