import { describe, expect, it } from "vitest";
import { asOperator, callTool, request, type TestRun } from "./helpers";

/** `POST /v1/runs` with an agent key: the profile decides the namespace and is the ceiling of its limits. */

const ACME_PROFILE_LIMITS = { max_calls: 60, max_writes: 10, max_destructive: 2, deadline_s: 1800 };

function openWith(key: string, body: Record<string, unknown> = {}) {
  return request("/v1/runs", {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function asRun(tenant: "acme" | "globex", data: unknown): TestRun {
  const opened = data as { run_id: string; run_token: string };
  return { id: opened.run_id, token: opened.run_token, tenant, data: data as Record<string, unknown> };
}

describe("agent keys on POST /v1/runs", () => {
  it("open a run in the profile's namespace with the profile's limits, without naming either", async () => {
    const { status, body } = await openWith("acme-agent-key");
    expect(status, JSON.stringify(body.error)).toBe(201);
    expect(body.data).toMatchObject({ namespace: "support", state: "open", limits: ACME_PROFILE_LIMITS });
    const deadline = Date.parse((body.data as { deadline_at: string }).deadline_at);
    expect(deadline - Date.now()).toBeGreaterThan(1_700_000);
  });

  it("may ask for less than the profile gives", async () => {
    const { status, body } = await openWith("acme-agent-key", {
      namespace: "support",
      limits: { max_calls: 5, deadline_s: 60 },
    });
    expect(status).toBe(201);
    expect(body.data).toMatchObject({ limits: { ...ACME_PROFILE_LIMITS, max_calls: 5, deadline_s: 60 } });
  });

  it("may not ask for more than the profile, even under the tenant's ceiling: 422 naming the limit", async () => {
    for (const [field, asked] of [
      ["max_calls", 61],
      ["max_destructive", 3],
      ["deadline_s", 3600],
    ] as const) {
      const { status, body } = await openWith("acme-agent-key", { limits: { [field]: asked } });
      expect(status, field).toBe(422);
      expect(body.error?.code).toBe("validation_error");
      expect(body.error?.message).toContain("agent profile's limit");
      expect(body.error?.problems).toEqual([
        expect.objectContaining({
          field: `limits.${field}`,
          hint: `At most ${ACME_PROFILE_LIMITS[field]}.`,
        }),
      ]);
    }
  });

  it("may not open a run in another namespace: 404 naming the ones it may use", async () => {
    const { status, body } = await openWith("acme-agent-key", { namespace: "billing" });
    expect(status).toBe(404);
    expect(body.error?.code).toBe("not_found");
    expect(body.error?.details).toMatchObject({ namespaces: ["support"] });
  });

  it("get a run token that works like any other, in the agent's tenant only", async () => {
    const { body } = await openWith("acme-agent-key");
    const run = asRun("acme", body.data);
    const read = await callTool(run, "lookup_order", { order_id: "A1002" });
    expect(read.body.outcome).toBe("success");
    expect(read.body.budget?.calls_left).toBe(ACME_PROFILE_LIMITS.max_calls - 1);
    const status = await request(`/v1/runs/${run.id}`, { headers: { authorization: `Bearer ${run.token}` } });
    expect(status.body.data).toMatchObject({ state: "open", used: { calls_used: 1 } });

    // A destructive call of an agent's run waits for the tenant's operator like any other.
    const asked = await callTool(run, "issue_refund", {
      order_id: "A1002",
      amount_cents: 110,
      reason: "user_cancel",
    });
    expect(asked.body.error?.code).toBe("approval_required");
    const detail = await asOperator(`/v1/approvals/${asked.body.approval?.id}`);
    expect(detail.body.data).toMatchObject({ run: { run_id: run.id } });

    const globex = asRun("globex", (await openWith("globex-agent-key")).body.data);
    const foreign = await callTool(globex, "lookup_order", { order_id: "A1002" });
    expect(foreign.body.error?.code).toBe("permission_error");
  });

  it("rotate like tenant keys: both keys of a profile in AGENT_KEYS open runs until the old one is dropped", async () => {
    for (const key of ["acme-agent-key", "acme-next-agent-key"]) {
      const { status, body } = await openWith(key);
      expect(status, key).toBe(201);
      expect(body.data).toMatchObject({ limits: ACME_PROFILE_LIMITS });
    }
    const { status } = await openWith("acme-retired-agent-key");
    expect(status).toBe(401);
  });
});
