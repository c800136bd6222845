import { loadCatalog } from "../../../src/catalog/catalog";
import { catalog as productCatalog } from "../../../src/tools";

/**
 * The catalog the `workerd-short-timeouts` project serves in place of src/tools/index.ts (see
 * vitest.config.ts): the product's tools, unchanged but for a timeout a test can outwait in a
 * moment. Long enough for a sandbox call on a busy machine, short enough to wait out.
 */
export const SHORT_TIMEOUT_MS = 1_000;

export const catalog = loadCatalog(
  productCatalog.all().map((tool) => ({ ...tool, timeout_ms: Math.min(tool.timeout_ms, SHORT_TIMEOUT_MS) })),
);
