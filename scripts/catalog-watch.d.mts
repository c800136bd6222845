/** Types of scripts/catalog-watch.mjs, for the tests that import it. */
export function watchCatalog(dir: string, onChange: () => void, quietMs?: number): () => void;
export function catalogRecompiler(root: string, log?: Pick<Console, "log">): () => void;
