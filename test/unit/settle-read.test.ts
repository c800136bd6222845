import { describe, expect, it } from "vitest";
import { keyPromiseOf } from "../../src/catalog/key-promise";
import { settleReadOf } from "../../src/catalog/settle-read";
import { catalog } from "../../src/tools";

const FIRST_SENT = Date.parse("2026-12-07T10:00:00Z");

const refunds = settleReadOf({
  tool: "list_refunds",
  args: { order_id: { arg: "/order_id" } },
  items: "refunds",
  match: { amount_cents: { arg: "/amount_cents" }, currency: { value: "EUR" } },
  since: "created_at",
  effect_id: "refund_id",
});

const call = { order_id: "A1001", amount_cents: 500 };
const refund = (refund_id: string, amount_cents: number, created_at: string) => ({
  refund_id,
  amount_cents,
  currency: "EUR",
  created_at,
});

describe("a settling read of a write in doubt", () => {
  it("reads with the call's own arguments", () => {
    expect(refunds.args(call)).toEqual({ order_id: "A1001" });
  });

  it("finds the one effect matching the call made since its first attempt, and names it", () => {
    const observed = {
      refunds: [
        refund("R1", 500, "2026-12-07T09:00:00Z"),
        refund("R2", 700, "2026-12-07T10:00:02Z"),
        refund("R3", 500, "2026-12-07T10:00:01Z"),
      ],
    };
    expect(refunds.judge(call, observed, FIRST_SENT)).toEqual({ kind: "found", effect_id: "R3" });
  });

  it("proves the effect absent when no item made since the first attempt matches", () => {
    const observed = {
      refunds: [refund("R1", 500, "2026-12-07T09:00:00Z"), refund("R2", 700, "2026-12-07T10:00:02Z")],
    };
    expect(refunds.judge(call, observed, FIRST_SENT)).toEqual({ kind: "absent" });
    expect(refunds.judge(call, { refunds: [] }, FIRST_SENT)).toEqual({ kind: "absent" });
  });

  it("cannot tell when two items match, or the answer has no list, or an item has no id", () => {
    const two = {
      refunds: [refund("R3", 500, "2026-12-07T10:00:01Z"), refund("R4", 500, "2026-12-07T10:00:03Z")],
    };
    expect(refunds.judge(call, two, FIRST_SENT)).toMatchObject({
      kind: "unclear",
      why: "2 items of refunds match this call",
    });
    expect(refunds.judge(call, { refunds: "none" }, FIRST_SENT)).toMatchObject({ kind: "unclear" });
    const nameless = {
      refunds: [{ amount_cents: 500, currency: "EUR", created_at: "2026-12-07T10:00:01Z" }],
    };
    expect(refunds.judge(call, nameless, FIRST_SENT)).toMatchObject({
      kind: "unclear",
      why: "the matching item has no refund_id",
    });
  });

  it("counts an item whose time is missing as possibly the call's own, never as older", () => {
    const observed = { refunds: [{ refund_id: "R9", amount_cents: 500, currency: "EUR" }] };
    expect(refunds.judge(call, observed, FIRST_SENT)).toEqual({ kind: "found", effect_id: "R9" });
  });
});

describe("what an upstream promises about the key", () => {
  it("is undecided, and sent as Idempotency-Key, when the declaration says nothing", () => {
    expect(keyPromiseOf({ credential: { kind: "proxy_jwt" }, base: undefined }, undefined)).toEqual({
      header: "Idempotency-Key",
      honoured: true,
      basis: "undecided",
      retention_ms: null,
    });
  });

  it("is what the declaration says, retention in milliseconds", () => {
    const upstream = {
      credential: { kind: "proxy_jwt" as const },
      base: undefined,
      idempotency: { header: "X-Request-Key", honoured: false, retention_s: 86_400 },
    };
    const promise = keyPromiseOf(upstream, undefined);
    expect(promise).toEqual({
      header: "X-Request-Key",
      honoured: false,
      basis: "declared",
      retention_ms: 86_400_000,
    });
  });

  it("is not honoured once a certification of this declaration saw a second effect under one key", () => {
    const upstream = {
      credential: { kind: "proxy_jwt" as const },
      base: undefined,
      idempotency: { header: "Idempotency-Key", honoured: true },
    };
    const measured = (status: "certified" | "refuted" | "stale" | "none") => ({
      status,
      key_reuse: null,
      credential: null,
      at: "2026-12-07T00:00:00Z",
    });
    expect(keyPromiseOf(upstream, measured("refuted"))).toMatchObject({ honoured: false, basis: "refuted" });
    expect(keyPromiseOf(upstream, measured("certified"))).toMatchObject({
      honoured: true,
      basis: "certified",
    });
    // A record of other declarations says nothing of these: the declaration stands.
    expect(keyPromiseOf(upstream, measured("stale"))).toMatchObject({ honoured: true, basis: "declared" });
    expect(keyPromiseOf(upstream, measured("none"))).toMatchObject({ honoured: true, basis: "declared" });
  });

  it("is honoured, declared or certified, for every shipped write tool", () => {
    const writes = catalog
      .all()
      .filter((tool) => tool.side_effect === "write" || tool.side_effect === "destructive");
    expect(writes.length).toBeGreaterThan(0);
    for (const tool of writes) {
      expect(tool.upstream?.idempotency, tool.name).toMatchObject({ honoured: true });
      expect(["declared", "certified"]).toContain(tool.upstream?.idempotency?.basis);
    }
  });
});
