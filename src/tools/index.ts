import { loadCatalog } from "../catalog/catalog";
import { declaredTools } from "../catalog/declared-tool";
import { readResultPage } from "./builtins";
import { declaredNamespaces } from "./catalog.generated";

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
