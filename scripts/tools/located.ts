/** `tools[1].request.path`, `globex.value_caps.USD.per_day`: a path as a reader finds it in the file. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) =>
      typeof part === "number" ? `[${part}]` : `${index === 0 ? "" : "."}${String(part)}`,
    )
    .join("");
}
