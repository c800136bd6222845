import { env } from "cloudflare:workers";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import type { PresentedCredential } from "../../sandbox/src/model";
import { parseKeyList } from "../../src/auth/keys";
import { verifySessionId } from "../../src/mcp/session";
import { type Envelope, envelopeSchema } from "../../src/wire/envelope";
import { refund, sandbox } from "./helpers";
import { bearer, connect, envelopeOf, INITIALIZE, rpc } from "./mcp-client";
import { forgerKey, userAssertion, WAYNE_ISSUER } from "./user-assertions";

/**
 * Both MCP revisions read the user as POST /v1/runs does: `X-User-Assertion` on a 2025 session's
 * `initialize` and on a 2026-07-28 `start_task`, verified against wayne's identity provider, with
 * the same refusals; the run then acts for that user (its policies, its upstream credential).
 */

const AGENT = "wayne-agent-key";
const CURRENT = "2026-07-28";
const ALICE = { name: "Alice Ng", refund_limit_cents: 10_000 };

/** The user the upstream saw in the credential of the run's issue_refund (the sandbox verified it). */
async function actOf(runId: string): Promise<unknown> {
  const { credentials } = await sandbox<{ credentials: PresentedCredential[] }>(
    `/_admin/credentials?run_id=${encodeURIComponent(runId)}`,
  );
  const presented = credentials.find((entry) => entry.tool === "issue_refund");
  if (!presented) throw new Error("the sandbox was shown no issue_refund credential");
  return decodeJwt(presented.credential).act;
}

/** Assertions each open must refuse, with the reason's words its message carries. */
async function refusals(): Promise<Array<[string, string | null, RegExp]>> {
  return [
    ["missing", null, /send X-User-Assertion/],
    ["forged", await userAssertion("alice", ALICE, { key: await forgerKey() }), /signature/],
    ["expired", await userAssertion("alice", ALICE, { expiresIn: -120 }), /expired/],
  ];
}

const withUser = (assertion: string | null): Record<string, string> =>
  assertion === null ? {} : { "x-user-assertion": assertion };

describe("a 2025 session's initialize", () => {
  it("opens a session whose run acts for the asserted user", async () => {
    const { client, transport } = await connect(AGENT, {
      headers: withUser(await userAssertion("alice", ALICE)),
    });
    const claims = await verifySessionId(
      transport.sessionId ?? "",
      parseKeyList("RUN_TOKEN_KEYS", env.RUN_TOKEN_KEYS),
    );
    if (!claims) throw new Error("initialize answered no valid session id");
    // Above alice's own limit: held for a human, as her policy says.
    const above = envelopeOf(
      await client.callTool({ name: "issue_refund", arguments: refund("W0029", 20_000) }),
    );
    expect(above.error?.code).toBe("approval_required");
    const within = envelopeOf(
      await client.callTool({ name: "issue_refund", arguments: refund("W0030", 1_000) }),
    );
    expect(within.outcome, JSON.stringify(within.error)).toBe("success");
    expect(await actOf(claims.run)).toEqual({ sub: "alice", iss: WAYNE_ISSUER });
  });

  it("refuses a missing, forged or expired assertion with 401, and opens no session", async () => {
    for (const [what, assertion, reason] of await refusals()) {
      const answer = await rpc({ ...bearer(AGENT), ...withUser(assertion) }, INITIALIZE);
      expect(answer.status, what).toBe(401);
      expect(answer.headers.get("mcp-session-id"), what).toBeNull();
      const error = (answer.json?.error as { data?: { code?: string; message?: string } } | undefined)?.data;
      expect(error?.code, what).toBe("permission_error");
      expect(error?.message, what).toMatch(reason);
    }
  });
});

/** A 2026-07-28 tools/call of `name`, as a conforming client sends it. */
async function currentCall(name: string, args: Record<string, unknown>, headers: Record<string, string>) {
  const answer = await rpc(
    {
      ...bearer(AGENT),
      "mcp-protocol-version": CURRENT,
      "mcp-method": "tools/call",
      "mcp-name": name,
      ...headers,
    },
    {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": CURRENT,
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
  );
  expect(answer.status, answer.text).toBe(200);
  return answer.json?.result as { isError?: boolean; structuredContent?: Record<string, unknown> };
}

describe("a 2026-07-28 start_task", () => {
  it("opens a run that acts for the asserted user", async () => {
    const started = await currentCall("start_task", {}, withUser(await userAssertion("alice", ALICE)));
    expect(started.isError, JSON.stringify(started)).not.toBe(true);
    const { run_handle, run_id } = started.structuredContent as { run_handle: string; run_id: string };
    const done = await currentCall("issue_refund", { ...refund("W0032", 1_000), run_handle }, {});
    expect(envelopeOf(done).outcome, JSON.stringify(done)).toBe("success");
    expect(await actOf(run_id)).toEqual({ sub: "alice", iss: WAYNE_ISSUER });
  });

  it("refuses a missing, forged or expired assertion, and opens no run", async () => {
    for (const [what, assertion, reason] of await refusals()) {
      const answer = await currentCall("start_task", {}, withUser(assertion));
      expect(answer.isError, what).toBe(true);
      const envelope: Envelope = envelopeSchema().parse(answer.structuredContent);
      expect(envelope.error?.code, what).toBe("permission_error");
      expect(envelope.error?.message, what).toMatch(reason);
      expect(envelope.data, what).toBeNull();
    }
  });
});
