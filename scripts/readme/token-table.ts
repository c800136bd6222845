import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { specsFor } from "../../src/specs/formats";
import { catalog } from "../../src/tools";
import type { SpecFormat } from "../../src/wire/requests";

/**
 * The token table of docs/mcp.md ("Tool specs"): what each `GET /v1/tools` format of the demo namespace costs, as the
 * proxy estimates it (`data.token_estimate.total`) and as OpenAI's o200k_base tokenizer counts it.
 * Computed from the same exporters and catalog the Worker serves, in process: no server needed.
 */

const NAMESPACE = "support";
const ROWS: SpecFormat[] = ["openai", "openai-responses", "anthropic", "gemini", "jsonschema", "mcp"];

const count = (n: number) => n.toLocaleString("en-US");

export function tokenTable(): string {
  const rows = ROWS.map((format) => {
    const specs = specsFor(catalog, NAMESPACE, format);
    return {
      format,
      tools: specs.tools.length,
      estimate: specs.token_estimate.total,
      actual: encode(JSON.stringify(specs.tools)).length,
    };
  });
  const tools = new Set(rows.map((row) => row.tools));
  if (tools.size !== 1)
    throw new Error(`the formats list different numbers of tools: ${[...tools].join(", ")}`);
  const lines = [
    `| format (${[...tools][0]} tools) | estimate | o200k_base |`,
    "| --- | --- | --- |",
    ...rows.map((row) => `| ${row.format} | ${count(row.estimate)} | ${count(row.actual)} |`),
  ];
  return `${lines.join("\n")}\n`;
}
