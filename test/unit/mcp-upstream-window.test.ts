import { describe, expect, it } from "vitest";
import { CatalogFileSchema } from "../../src/catalog/declaration";

/**
 * The window in which a remote MCP tool whose definition changed can still be served: the longest
 * the proxy trusts a listing, `definitions_max_age_s`, 60 s unless an upstream declares another (at
 * most an hour; 0 lists before every call).
 */
const upstreams = CatalogFileSchema.shape.upstreams;
const server = (extra: Record<string, unknown> = {}) => ({
  TICKETS_MCP: {
    kind: "mcp",
    credential: { kind: "proxy_jwt" },
    idempotency: { honoured: true },
    ...extra,
  },
});
const maxAge = (extra?: Record<string, unknown>) => {
  const parsed = upstreams.parse(server(extra)).TICKETS_MCP;
  return parsed && "definitions_max_age_s" in parsed ? parsed.definitions_max_age_s : undefined;
};

describe("an MCP upstream's definitions_max_age_s", () => {
  it("is 60 seconds unless declared", () => {
    expect(maxAge()).toBe(60);
  });

  it.each([0, 5, 3600])("takes %i seconds when declared", (seconds) => {
    expect(maxAge({ definitions_max_age_s: seconds })).toBe(seconds);
  });

  it.each([3601, -1, 1.5])("refuses %s", (seconds) => {
    expect(upstreams.safeParse(server({ definitions_max_age_s: seconds })).success).toBe(false);
  });
});
