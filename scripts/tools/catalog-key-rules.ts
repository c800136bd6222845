// The second leg of exactly-once, checked where it is declared: an upstream that takes writes says
// whether it applies a key once; a tool on one that does not says how a read settles it; the
// arguments a certification sends are valid for the tool. Each problem names its field.
import type { CatalogFile, ToolDeclaration } from "../../src/catalog/declaration";
import type { ToolSpec } from "../../src/catalog/define-tool";
import { pointerTokens } from "../../src/catalog/templates";

type Report = (path: PropertyKey[], problem: string) => void;

const changes = (tool: ToolDeclaration) => tool.side_effect === "write" || tool.side_effect === "destructive";

/** A write or destructive tool's upstream must decide whether it honours keys. */
export function undecidedKeyProblems(file: CatalogFile, report: Report): void {
  for (const [name, upstream] of Object.entries(file.upstreams)) {
    if (upstream.kind === "mcp" || upstream.idempotency) continue;
    const writers = file.tools.filter((tool) => tool.request.upstream === name && changes(tool));
    if (writers.length === 0) continue;
    report(
      ["upstreams", name, "idempotency"],
      `undecided, yet ${writers.map((tool) => tool.name).join(", ")} ${writers.length === 1 ? "writes" : "write"} through it: declare idempotency: { honoured: true } if a second request under one key makes no second effect (the API documents an idempotency header), or { honoured: false } so a write in doubt is settled by a read, never resent (docs/own-api.md)`,
    );
  }
}

/** A tool's `settle` and `certify`, against its namespace and its own input. */
export function keyToolRules(
  file: CatalogFile,
  tool: ToolDeclaration,
  spec: ToolSpec | null,
  report: Report,
) {
  const settle = tool.settle;
  if (settle) {
    if (!changes(tool)) {
      report(
        ["settle"],
        `a ${tool.side_effect} tool is never in doubt: settle is for write and destructive tools`,
      );
    }
    const upstream = file.upstreams[tool.request.upstream];
    if (
      upstream &&
      (upstream.kind === "mcp" ? upstream.idempotency.honoured : upstream.idempotency?.honoured)
    ) {
      report(
        ["settle"],
        `${tool.request.upstream} honours keys, so a write in doubt is resent under its key and never settled by a read; remove settle or declare honoured: false`,
      );
    }
    const reader = file.tools.find((candidate) => candidate.name === settle.tool);
    if (!reader) report(["settle", "tool"], `${settle.tool} is not a tool of namespace ${file.namespace}`);
    else if (reader.side_effect !== "read") {
      report(
        ["settle", "tool"],
        `${settle.tool} is a ${reader.side_effect} tool; a settling read must be a read`,
      );
    }
    const fields = (tool.input.properties ?? {}) as Record<string, unknown>;
    const refs = [
      ...Object.entries(settle.args).map(([name, ref]) => [["settle", "args", name], ref] as const),
      ...Object.entries(settle.match).map(([field, ref]) => [["settle", "match", field], ref] as const),
    ];
    for (const [at, ref] of refs) {
      const where = [...at];
      if (!("arg" in ref)) continue;
      const field = pointerTokens(ref.arg)[0] ?? "";
      if (!Object.hasOwn(fields, field)) report(where, `${ref.arg} names no input field`);
    }
  }
  // A read's or a draft's arguments serve the credential probes; a write's also the key probes.
  if (tool.certify && spec) {
    const parsed = spec.input.safeParse(tool.certify.args);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        report(["certify", "args", ...issue.path], `not a valid argument of ${tool.name}: ${issue.message}`);
      }
    }
  }
}
