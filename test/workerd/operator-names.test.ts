import { describe, expect, it } from "vitest";
import { operatorIdOf } from "../../src/auth/operator-id";
import { operatorNameOf, parseOperatorKeys } from "../../src/auth/operator-keys";
import { sha256Hex } from "../../src/core/digest";
import { signedInOperator } from "./console-client";
import { asOperator, callTool, decide, OPERATOR_KEYS, openRun, traceOf } from "./helpers";

const HASH_A = "a".repeat(64);
const HASH_B = "b".repeat(64);

describe("operator keys with display names", () => {
  it("reads named entries and bare hashes side by side, and finds a name by operator id", async () => {
    const realHash = await sha256Hex(OPERATOR_KEYS.acme);
    const keys = parseOperatorKeys(
      JSON.stringify({ acme: [{ name: "Dana Reyes", sha256: realHash }, HASH_A], globex: [HASH_B] }),
    );
    expect(keys.hashes.get("acme")).toEqual([realHash, HASH_A]);
    expect(operatorNameOf(keys, "acme", await operatorIdOf(OPERATOR_KEYS.acme))).toBe("Dana Reyes");
    // A bare hash has no name, and a name is never found through another tenant.
    expect(operatorNameOf(keys, "acme", `operator:${HASH_A.slice(0, 12)}`)).toBeNull();
    expect(operatorNameOf(keys, "globex", await operatorIdOf(OPERATOR_KEYS.acme))).toBeNull();
    expect(operatorNameOf(keys, "acme", "agent")).toBeNull();
  });

  it.each([
    ["an empty name", { acme: [{ name: " ", sha256: HASH_A }] }],
    ["a name with control characters", { acme: [{ name: "Dana\u0007", sha256: HASH_A }] }],
    ["a name longer than 64 characters", { acme: [{ name: "x".repeat(65), sha256: HASH_A }] }],
    ["an entry with an unknown field", { acme: [{ name: "Dana", sha256: HASH_A, role: "admin" }] }],
    ["a hash that is not SHA-256 hex", { acme: [{ name: "Dana", sha256: "abc" }] }],
    ["a tenant without keys", { acme: [] }],
    ["a list instead of an object", [HASH_A]],
  ])("refuses %s, naming OPERATOR_KEYS", (_label, value) => {
    expect(() => parseOperatorKeys(JSON.stringify(value))).toThrow(/OPERATOR_KEYS must be a JSON object/);
  });

  it("records the deciding operator's name on the approval and on the execution in the trace", async () => {
    const run = await openRun("acme");
    const asked = await callTool(run, "issue_refund", {
      order_id: "A1004",
      amount_cents: 150,
      reason: "user_cancel",
    });
    const approvalId = asked.body.approval?.id ?? "";
    expect(approvalId).toMatch(/^apr_/);

    const approved = await decide(approvalId, "approve", "checked the order");
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const operatorId = await operatorIdOf(OPERATOR_KEYS.acme);
    expect(approved.body.data).toMatchObject({
      approval: { state: "executed", decided_by: operatorId, decided_by_name: "Dana Reyes" },
    });

    const listed = await asOperator("/v1/approvals?state=executed");
    const summary = (
      listed.body.data as { approvals: Array<{ id: string; decided_by_name: string | null }> }
    ).approvals.find((entry) => entry.id === approvalId);
    expect(summary?.decided_by_name).toBe("Dana Reyes");

    const entries = await traceOf(run);
    const execution = entries.find((entry) => entry.actor === operatorId);
    expect(execution).toMatchObject({ actor_name: "Dana Reyes", tool: "issue_refund", outcome: "success" });
    // The agent's own calls carry no operator name.
    const agentCalls = entries.filter((entry) => entry.actor === "agent");
    expect(agentCalls.length).toBeGreaterThan(0);
    expect(agentCalls.every((entry) => entry.actor_name === null)).toBe(true);
  });

  it("shows the signed-in operator by name in the console", async () => {
    const console = await signedInOperator("globex");
    const page = await console.get("/console");
    expect(page.html).toContain("Sam Okafor");
    expect(page.html).not.toContain(await operatorIdOf(OPERATOR_KEYS.globex));
  });
});
