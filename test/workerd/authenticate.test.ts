import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authenticate } from "../../src/auth/authenticate";
import { signSession } from "../../src/auth/console-session";
import { operatorIdOf } from "../../src/auth/operator-id";
import { ACCEPTS, type Accept } from "../../src/auth/principal";
import { issueRunToken, type RunTokenClaims } from "../../src/auth/run-token";
import { loadConfig } from "../../src/config/load";

/**
 * The one authenticator, called directly: every principal kind admitted where a route takes it, and
 * every refusal reason with the status and words a caller sees. The routes' own tests check that
 * each route maps these answers to its protocol.
 */

const config = loadConfig(env);
const TENANT_KEY = "acme-demo-key";
const OPERATOR_KEY = "acme-operator-key";
const AGENT_KEY = "acme-agent-key";
const HOUR = 60 * 60 * 1000;

function runClaims(overrides: Partial<RunTokenClaims> = {}): RunTokenClaims {
  return { tenant: "acme", run: "run_1", ns: "support", exp: Date.now() + HOUR, ...overrides };
}

function runToken(overrides: Partial<RunTokenClaims> = {}, keys = config.runTokenKeys) {
  return issueRunToken(runClaims(overrides), keys);
}

async function sessionCookie(overrides: { exp?: number } = {}) {
  const session = {
    tenant: "acme",
    operator: await operatorIdOf(OPERATOR_KEY),
    csrf: "c".repeat(43),
    exp: Date.now() + HOUR,
    ...overrides,
  };
  return signSession(session, config.runTokenKeys);
}

async function refusalOf(
  credential: string | null | undefined,
  accept: Accept,
  options: Parameters<typeof authenticate>[3] = {},
) {
  const answer = await authenticate(config, credential, accept, options);
  if (answer.ok) throw new Error(`expected a refusal, got a ${answer.principal.kind} principal`);
  return answer.refusal;
}

describe("authenticate admits each principal where a route takes it", () => {
  it("a tenant key is the tenant's orchestrator, for opening runs and reading tool specs", async () => {
    for (const accept of ["run_opener", "tool_specs"] as const) {
      expect(await authenticate(config, TENANT_KEY, accept)).toEqual({
        ok: true,
        principal: { kind: "tenant", tenant: "acme" },
      });
    }
  });

  it("a run token is its run, on the run's routes, tool specs and /mcp", async () => {
    const token = await runToken();
    for (const accept of ["run", "tool_specs", "mcp"] as const) {
      const answer = await authenticate(config, token, accept, { run: "run_1" });
      expect(answer).toMatchObject({
        ok: true,
        principal: { kind: "run", claims: runClaims({ exp: expect.any(Number) }) },
      });
    }
  });

  it("an agent key is its agent profile, for opening runs and on /mcp", async () => {
    for (const accept of ["run_opener", "mcp"] as const) {
      expect(await authenticate(config, AGENT_KEY, accept)).toMatchObject({
        ok: true,
        principal: {
          kind: "agent",
          agent: { tenant: "acme", profile: "support", namespace: "support", via: "agent_key" },
        },
      });
    }
  });

  it("an OAuth grant on /mcp is the agent profile it names, whatever bearer came with it", async () => {
    const answer = await authenticate(config, "acme:grant:secret", "mcp", {
      oauthProps: { tenant: "acme", profile: "support" },
    });
    expect(answer).toMatchObject({
      ok: true,
      principal: { kind: "agent", agent: { tenant: "acme", profile: "support", via: "oauth" } },
    });
  });

  it("props of another shape are no grant: the bearer decides", async () => {
    const answer = await authenticate(config, AGENT_KEY, "mcp", { oauthProps: {} });
    expect(answer).toMatchObject({ ok: true, principal: { kind: "agent", agent: { via: "agent_key" } } });
  });

  it("an operator key is a named operator of its tenant, on the operator API and the sign-in form", async () => {
    const operator = {
      tenant: "acme",
      operator: await operatorIdOf(OPERATOR_KEY),
      name: "Dana Reyes",
      roles: ["support_lead", "finance_lead"],
    };
    for (const accept of ["operator", "sign_in"] as const) {
      expect(await authenticate(config, OPERATOR_KEY, accept)).toEqual({
        ok: true,
        principal: { kind: "operator", operator },
      });
    }
  });

  it("a console session is its signed-in operator, with the name configured now", async () => {
    const answer = await authenticate(config, await sessionCookie(), "console");
    expect(answer).toMatchObject({
      ok: true,
      principal: {
        kind: "session",
        session: { tenant: "acme", operator: await operatorIdOf(OPERATOR_KEY), name: "Dana Reyes" },
      },
    });
  });
});

describe("authenticate refuses, saying why", () => {
  it("no credential is missing (401), in words that name what the route takes", async () => {
    const expected: Record<Accept, string> = {
      run_opener: "This route needs a tenant key or an agent key: Authorization: Bearer <key>.",
      run: "This route needs the run's token: Authorization: Bearer <run token>.",
      operator: "This route needs an operator key: Authorization: Bearer <operator key>.",
      tool_specs: "This route needs a tenant key or a run token: Authorization: Bearer <key>.",
      mcp: "/mcp needs a credential: Authorization: Bearer <agent key>, or <run token> from POST /v1/runs.",
      console: "The console needs a session: sign in with an operator key.",
      sign_in: "That is not an operator key of any tenant. Check the key and try again.",
    };
    for (const accept of Object.keys(ACCEPTS) as Accept[]) {
      for (const credential of [null, undefined, ""]) {
        expect(await refusalOf(credential, accept)).toEqual({
          reason: "missing",
          status: 401,
          message: expected[accept],
        });
      }
    }
  });

  it("a credential of no kind the route takes is unknown (401)", async () => {
    const expected: Record<Accept, string> = {
      run_opener: "The tenant key or agent key is not valid.",
      run: "The run token is not valid.",
      operator: "The operator key is not valid.",
      tool_specs: "The tenant key or run token is not valid.",
      mcp: "The bearer is neither a run token nor an agent key. Use an agent key, or open a run with POST /v1/runs and use its run_token.",
      console: "The console session is forged or expired, or its operator key was removed; sign in again.",
      sign_in: "That is not an operator key of any tenant. Check the key and try again.",
    };
    for (const accept of Object.keys(ACCEPTS) as Accept[]) {
      expect(await refusalOf("not-a-credential-of-ours", accept)).toEqual({
        reason: "unknown",
        status: 401,
        message: expected[accept],
      });
    }
  });

  it("a valid credential of a kind the route does not take is unknown there, not named", async () => {
    const cases: Array<[string, Accept]> = [
      [OPERATOR_KEY, "run_opener"],
      [await runToken(), "run_opener"],
      [TENANT_KEY, "run"],
      [AGENT_KEY, "tool_specs"],
      [TENANT_KEY, "mcp"],
      [OPERATOR_KEY, "mcp"],
      [OPERATOR_KEY, "console"],
      [await runToken(), "console"],
      [TENANT_KEY, "sign_in"],
      [await runToken(), "sign_in"],
      [await sessionCookie(), "sign_in"],
    ];
    for (const [credential, accept] of cases) {
      expect((await refusalOf(credential, accept)).reason, `${accept}`).toBe("unknown");
    }
  });

  it("a run token signed with no current key has a bad signature (401), and is not tried as a key", async () => {
    const forged = await runToken({}, ["a-key-the-proxy-does-not-have"]);
    for (const accept of ["run", "tool_specs", "mcp"] as const) {
      expect(await refusalOf(forged, accept)).toEqual({
        reason: "bad_signature",
        status: 401,
        message: "The run token is not valid.",
      });
    }
  });

  it("a run token past its expiry has expired (401)", async () => {
    const token = await runToken();
    for (const accept of ["run", "tool_specs", "mcp"] as const) {
      expect(await refusalOf(token, accept, { now: Date.now() + 2 * HOUR })).toEqual({
        reason: "expired",
        status: 401,
        message: "The run token has expired; open a new run.",
      });
    }
  });

  it("a run token of another run is refused on this run's routes (403)", async () => {
    expect(await refusalOf(await runToken(), "run", { run: "run_2" })).toEqual({
      reason: "other_run",
      status: 403,
      message: "This run token belongs to another run.",
    });
  });

  it("an OAuth grant for an agent profile that no longer exists is stale (401)", async () => {
    expect(await refusalOf(AGENT_KEY, "mcp", { oauthProps: { tenant: "acme", profile: "gone" } })).toEqual({
      reason: "stale_grant",
      status: 401,
      message: "The OAuth grant names an agent profile that no longer exists; authorize again.",
    });
  });

  it("a machine's valid credential on the operator API is named and refused (403)", async () => {
    const cases = [
      [
        await runToken(),
        "run_token_as_operator",
        "A run token cannot act as an operator; approvals need a human's operator key.",
      ],
      [
        TENANT_KEY,
        "tenant_key_as_operator",
        "A tenant key cannot act as an operator; approvals need a human's operator key.",
      ],
      [
        AGENT_KEY,
        "agent_key_as_operator",
        "An agent key cannot act as an operator; approvals need a human's operator key.",
      ],
    ] as const;
    for (const [credential, reason, message] of cases) {
      expect(await refusalOf(credential, "operator")).toEqual({ reason, status: 403, message });
    }
  });

  it("an expired run token on the operator API is just not an operator key (401)", async () => {
    const refusal = await refusalOf(await runToken(), "operator", { now: Date.now() + 2 * HOUR });
    expect(refusal).toMatchObject({ reason: "unknown", status: 401 });
  });

  it("a console session that expired, or whose operator key was removed, is unknown", async () => {
    expect((await refusalOf(await sessionCookie({ exp: Date.now() - 1 }), "console")).reason).toBe("unknown");
    const withoutAcmeOperators = {
      ...config,
      operatorKeyHashes: new Map([["globex", config.operatorKeyHashes.get("globex") ?? []]]),
    };
    const answer = await authenticate(withoutAcmeOperators, await sessionCookie(), "console");
    expect(answer).toMatchObject({ ok: false, refusal: { reason: "unknown" } });
  });
});
