import { describe, expect, it } from "vitest";
import { callTool, openRun, request } from "./helpers";

describe("smoke", () => {
  it("healthz names the environment", async () => {
    const { status, body } = await request("/healthz");
    expect(status).toBe(200);
    expect(body.environment).toBe("sandbox");
  });
  it("looks up an order through the sandbox", async () => {
    const run = await openRun();
    const { status, body } = await callTool(run, "lookup_order", { order_id: "A1001" });
    expect(body.error).toBeNull();
    expect(status).toBe(200);
  });
});
