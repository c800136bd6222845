import { describe, expect, it } from "vitest";
import { type PlaceableNamespace, placedObject } from "../../src/config/placement";
import { parseResidencyMode } from "../../src/config/residency";
import { parseTenants } from "../../src/config/tenants";

/**
 * A namespace that records how it is reached. The unit under test is the choice of namespace, name
 * and options; the real bindings are exercised in test/workerd/residency.test.ts, where workerd
 * refuses `jurisdiction()` itself.
 */
interface Reached {
  jurisdiction: string | null;
  name: string;
  options: DurableObjectNamespaceGetDurableObjectOptions | undefined;
}

function watchedNamespace(jurisdiction: string | null = null): PlaceableNamespace<Reached> {
  return {
    idFromName: (name) => ({ name, toString: () => name, equals: () => false }) as DurableObjectId,
    get: (id, options) => ({ jurisdiction, name: id.name ?? "", options }),
    jurisdiction: (chosen) => watchedNamespace(chosen),
  };
}

const tenant = {
  namespaces: ["support"],
  ceilings: { max_calls: 5, max_writes: 1, max_destructive: 1, deadline_s: 60 },
  max_refund_cents: 100,
};

describe("placement of a tenant's objects", () => {
  it("puts an EU tenant's objects in the EU namespace, with its location hint", () => {
    const reached = placedObject(
      watchedNamespace(),
      { jurisdiction: "eu", location_hint: "weur" },
      "cloudflare",
      "stark/run_1",
    );
    expect(reached).toEqual({ jurisdiction: "eu", name: "stark/run_1", options: { locationHint: "weur" } });
  });

  it("leaves a tenant without residency where it was: the plain namespace, no options", () => {
    expect(placedObject(watchedNamespace(), {}, "cloudflare", "acme/run_1")).toEqual({
      jurisdiction: null,
      name: "acme/run_1",
      options: undefined,
    });
  });

  it("passes a location hint alone, without a jurisdiction", () => {
    expect(placedObject(watchedNamespace(), { location_hint: "apac" }, "cloudflare", "t")).toEqual({
      jurisdiction: null,
      name: "t",
      options: { locationHint: "apac" },
    });
  });

  it("names the jurisdiction into the object's name when simulated, never calling jurisdiction()", () => {
    expect(placedObject(watchedNamespace(), { jurisdiction: "eu" }, "simulated", "stark")).toEqual({
      jurisdiction: null,
      name: "eu:stark",
      options: undefined,
    });
  });
});

describe("residency settings", () => {
  it("refuses an unknown jurisdiction, an unknown hint and a hint outside the jurisdiction, where written", () => {
    expect(() => parseTenants({ t: { ...tenant, residency: { jurisdiction: "uk" } } })).toThrow(
      'TENANTS is invalid at "t.residency.jurisdiction": "uk" is not a jurisdiction: one of eu, fedramp, fedramp-high',
    );
    expect(() => parseTenants({ t: { ...tenant, residency: { location_hint: "mars" } } })).toThrow(
      'TENANTS is invalid at "t.residency.location_hint": "mars" is not a location hint: one of wnam, enam, sam, weur, eeur, apac, oc, afr, me',
    );
    expect(() =>
      parseTenants({ t: { ...tenant, residency: { jurisdiction: "eu", location_hint: "enam" } } }),
    ).toThrow(
      'TENANTS is invalid at "t.residency.location_hint": "enam" lies outside the jurisdiction "eu" (inside it: weur, eeur)',
    );
    expect(parseTenants({ t: tenant }).t?.residency).toEqual({});
  });

  it("simulates jurisdictions only where asked and never in production", () => {
    expect(parseResidencyMode(undefined, "production")).toBe("cloudflare");
    expect(parseResidencyMode("simulated", "sandbox")).toBe("simulated");
    expect(() => parseResidencyMode("simulated", "production")).toThrow(/local runtime only/);
    expect(() => parseResidencyMode("eu", "sandbox")).toThrow(
      'RESIDENCY must be "cloudflare" (or absent) or "simulated" (got "eu")',
    );
  });
});
