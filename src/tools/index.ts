import { loadCatalog } from "../catalog/catalog";
import { readResultPage } from "./builtins";
import { supportTools } from "./support";

/**
 * The catalog this deployment serves, with the built-in tools every namespace gets. Loading it
 * checks every rule; a bad tool stops the worker.
 */
export const catalog = loadCatalog([...supportTools, readResultPage("support")]);
