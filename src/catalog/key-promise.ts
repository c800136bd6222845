import type { Certification } from "./certification";
import type { CatalogFile } from "./declaration";
import type { KeyPromise, ToolSpec } from "./define-tool";

type UpstreamDeclaration = CatalogFile["upstreams"][string];

/**
 * What an upstream's declaration promises about the proxy's key, weighed against what a
 * certification of that same declaration measured. A certification that saw a second effect under
 * one key refutes "honoured": the upstream is then treated as not honouring keys, whatever it
 * declares. One that saw none makes a declared "honoured" certified. A stale one (of other
 * declarations) or none leaves the declaration as it is. An HTTP upstream that says nothing is
 * `undecided` (check allows that only for reads) and is sent the key as if honoured: a read is
 * never in doubt, so nothing rests on it.
 */
export function keyPromiseOf(
  upstream: UpstreamDeclaration | undefined,
  certification: Certification | undefined,
): KeyPromise {
  const idempotency = upstream?.idempotency;
  if (!idempotency) {
    return { header: "Idempotency-Key", honoured: true, basis: "undecided", retention_ms: null };
  }
  const declared = {
    header: "header" in idempotency ? idempotency.header : "Idempotency-Key",
    retention_ms: idempotency.retention_s === undefined ? null : idempotency.retention_s * 1_000,
  };
  const evidence = certification?.at ? { evidence_at: certification.at } : {};
  if (certification?.status === "refuted") {
    return { ...declared, honoured: false, basis: "refuted", ...evidence };
  }
  if (certification?.status === "certified" && idempotency.honoured) {
    return { ...declared, honoured: true, basis: "certified", ...evidence };
  }
  return { ...declared, honoured: idempotency.honoured, basis: "declared" };
}

/**
 * Whether a write whose outcome is unknown may be sent again under its key: when its upstream
 * honours keys, as declared and not refuted (or, for a tool defined in code, unless said otherwise).
 */
export function resendsInDoubt(tool: Pick<ToolSpec, "upstream">): boolean {
  // A remote MCP server's declaration states it twice (the server and the promise); either says no.
  const upstream = tool.upstream;
  return (upstream?.idempotency?.honoured ?? true) && (upstream?.remote?.server.honoured ?? true);
}

/** The header a tool's upstream reads the idempotency key from, lower-cased as requests store headers. */
export function idempotencyHeaderOf(tool: Pick<ToolSpec, "upstream">): string {
  return (tool.upstream?.idempotency?.header ?? "Idempotency-Key").toLowerCase();
}
