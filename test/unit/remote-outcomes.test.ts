import { describe, expect, it } from "vitest";
import type { RemoteTool, ToolSpec } from "../../src/catalog/define-tool";
import { catalog } from "../../src/tools";
import { classifyRemote } from "../../src/upstream/dispatch-remote";

/** How a remote MCP call's outcome becomes ours, for each thing a server can answer. */

const remoteOf = (tool: ToolSpec): RemoteTool => {
  const remote = tool.upstream?.remote;
  if (!remote) throw new Error(`${tool.name} is not a remote tool`);
  return remote;
};
const read = catalog.find("helpdesk", "get_ticket_notes") as ToolSpec;
const write = catalog.find("helpdesk", "add_ticket_note") as ToolSpec;
const classify = (tool: ToolSpec, outcome: Parameters<typeof classifyRemote>[0]) =>
  classifyRemote(outcome, tool, remoteOf(tool));

describe("a remote call's outcome", () => {
  it.each([-32700, -32600, -32601, -32602])(
    "JSON-RPC %i is a refusal before the tool ran: terminal, nothing done, even for a write",
    (code) => {
      const outcome = classify(write, { kind: "rpc_error", code, refused: true });
      expect(outcome).toMatchObject({ kind: "failure", transient: false });
      expect(outcome.kind === "failure" && outcome.failure.side_effect_confirmed).toBe(false);
    },
  );

  it("a server error while the tool ran leaves a write unknown and a read retryable", () => {
    const forWrite = classify(write, { kind: "rpc_error", code: -32603, refused: false });
    expect(forWrite.kind === "failure" && forWrite.failure.side_effect_confirmed).toBeNull();
    const forRead = classify(read, { kind: "rpc_error", code: -32603, refused: false });
    expect(forRead).toMatchObject({ kind: "failure", transient: true });
  });

  it("a failure before the call left (connect, listing) did nothing, whatever the class", () => {
    for (const outcome of [
      { kind: "timeout", stage: "connect" },
      { kind: "network_error", stage: "connect" },
      { kind: "http_error", status: 503, stage: "connect" },
    ] as const) {
      const classified = classify(write, outcome);
      expect(classified.kind === "failure" && classified.failure.side_effect_confirmed).toBe(false);
    }
  });

  it("a call cut off after it left leaves a write unknown", () => {
    for (const outcome of [
      { kind: "timeout", stage: "call" },
      { kind: "network_error", stage: "call" },
      { kind: "http_error", status: 502, stage: "call" },
    ] as const) {
      const classified = classify(write, outcome);
      expect(classified.kind === "failure" && classified.failure.side_effect_confirmed).toBeNull();
    }
  });

  it("unstructured content becomes text and described blocks, never raw bytes", () => {
    const classified = classify(read, {
      kind: "result",
      result: {
        content: [
          { type: "text", text: "first" },
          { type: "image", data: "aGVsbG8gd29ybGQ=", mimeType: "image/png" },
          { type: "text", text: "second" },
        ],
      },
    });
    expect(classified).toEqual({
      kind: "success",
      status: 200,
      body: { text: "first\n\nsecond", non_text: ["image (image/png, 12 bytes)"] },
    });
  });

  it("drift is a terminal refusal that names the server, the tool and both pins", () => {
    const classified = classify(write, { kind: "drift", drift: "changed", live_pin: "sha256:live" });
    expect(classified).toMatchObject({
      kind: "failure",
      failure: {
        code: "upstream_changed",
        side_effect_confirmed: false,
        details: { server: "HELPDESK_MCP", remote_tool: "add_ticket_note", live: "sha256:live" },
      },
    });
  });
});
