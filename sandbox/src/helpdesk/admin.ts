import { Hono } from "hono";
import type { AppEnv } from "../auth";
import { storeOf } from "../env";
import { errorResponse } from "../http";
import { describeIssues } from "../validation";
import { DriftBody } from "./drift";
import { HELPDESK_TOOL_NAMES } from "./tools";

/**
 * The helpdesk's test controls, under `/_admin/helpdesk` behind the admin token: count what the
 * writes applied, read notes by idempotency key, change how tools are published, forget sessions.
 */
export const helpdeskAdmin = new Hono<AppEnv>();

/** Every application of a write, oldest first: a replay or a refused call adds none. */
helpdeskAdmin.get("/effects", async (c) => {
  const effects = await storeOf(c.env).listHelpdeskEffects({
    tenant: c.req.query("tenant") ?? null,
    tool: c.req.query("tool") ?? null,
  });
  return c.json({ effects, count: effects.length });
});

helpdeskAdmin.get("/notes", async (c) =>
  c.json({
    notes: await storeOf(c.env).listHelpdeskNotes({
      tenant: c.req.query("tenant") ?? null,
      idempotency_key: c.req.query("idempotency_key") ?? null,
    }),
  }),
);

helpdeskAdmin.post("/drift", async (c) => {
  let json: unknown;
  try {
    json = await c.req.json();
  } catch {
    return errorResponse(400, "invalid_request", "Request body must be valid JSON.");
  }
  const parsed = DriftBody.safeParse(json);
  if (!parsed.success) return errorResponse(400, "invalid_request", describeIssues(parsed.error));
  if (!(HELPDESK_TOOL_NAMES as readonly string[]).includes(parsed.data.tool)) {
    return errorResponse(404, "not_found", `The helpdesk has no tool '${parsed.data.tool}'.`);
  }
  await storeOf(c.env).driftHelpdeskTool(parsed.data);
  return c.json({ drift: parsed.data }, 201);
});

/** Back to the tools as first published, for one tenant (`?tenant=`) or all. */
helpdeskAdmin.delete("/drift", async (c) => {
  await storeOf(c.env).resetHelpdeskDrift(c.req.query("tenant") ?? null);
  return c.json({ ok: true });
});

/** Forgets sessions as a restarted server would: one (`?session_id=`), a tenant's, or all. */
helpdeskAdmin.delete("/sessions", async (c) => {
  const forgotten = await storeOf(c.env).forgetHelpdeskSessions(
    c.req.query("tenant") ?? null,
    c.req.query("session_id") ?? null,
  );
  return c.json({ forgotten });
});
