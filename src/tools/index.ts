import { loadCatalog } from "../catalog/catalog";
import { supportTools } from "./support";

/** The catalog this deployment serves. Loading it checks every rule; a bad tool stops the worker. */
export const catalog = loadCatalog([...supportTools]);
