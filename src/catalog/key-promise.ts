import type { CatalogFile } from "./declaration";
import type { KeyPromise } from "./define-tool";

type UpstreamDeclaration = CatalogFile["upstreams"][string];

/**
 * What an upstream's declaration promises about the proxy's key. An HTTP upstream that leaves it out
 * is `undecided` (check allows that only for reads) and is sent the key as if honoured: a read is
 * never in doubt, so nothing rests on it.
 */
export function keyPromiseOf(upstream: UpstreamDeclaration | undefined): KeyPromise {
  const idempotency = upstream?.idempotency;
  if (!idempotency) {
    return { header: "Idempotency-Key", honoured: true, basis: "undecided", retention_ms: null };
  }
  return {
    header: "header" in idempotency ? idempotency.header : "Idempotency-Key",
    honoured: idempotency.honoured,
    basis: "declared",
    retention_ms: idempotency.retention_s === undefined ? null : idempotency.retention_s * 1_000,
  };
}
