// What `check` asks of a remote MCP tool offline: its reviewed definition is in the namespace's
// pins file, its `pin` is that definition's digest, and it declares no input field the server's
// reviewed schema does not take (the server would refuse it, or worse, ignore it).
import type { ToolDeclaration } from "../../src/catalog/declaration";
import { type Pins, pinDigest } from "./mcp-pins";

type Report = (path: PropertyKey[], problem: string) => void;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * @param pins the namespace's pins file, null when it is missing or not a JSON object
 * @param pinsLabel where that file is, as the problems name it
 */
export function remoteToolRules(
  namespace: string,
  tool: ToolDeclaration,
  pins: Pins | null,
  pinsLabel: string,
  report: Report,
): void {
  const { request } = tool;
  if (!("tool" in request)) return;
  const repin = `run npm run tools -- pin ${namespace}`;
  if (!pins) {
    report(
      ["request", "pin"],
      `no reviewed definitions: ${pinsLabel} is missing or not a JSON object; npm run tools -- import mcp writes it, npm run tools -- pin ${namespace} adds a tool's`,
    );
    return;
  }
  const reviewed = pins[request.tool];
  if (!isRecord(reviewed)) {
    report(["request", "tool"], `${pinsLabel} holds no reviewed definition of ${request.tool}; ${repin}`);
    return;
  }
  if (pinDigest(reviewed as unknown as Parameters<typeof pinDigest>[0]) !== request.pin) {
    report(["request", "pin"], `pin does not match the reviewed definition in ${pinsLabel}; ${repin}`);
  }
  const schema = reviewed.inputSchema;
  const taken = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {};
  const declared = isRecord(tool.input.properties) ? tool.input.properties : {};
  for (const field of Object.keys(declared)) {
    if (!Object.hasOwn(taken, field)) {
      report(
        ["input", "properties", field],
        `the server's ${request.tool} takes no field "${field}" (its reviewed inputSchema in ${pinsLabel}); declare only fields the server takes`,
      );
    }
  }
}
