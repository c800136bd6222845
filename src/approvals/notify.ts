import type { ApprovalSummary } from "./model";

type Send = (request: Request) => Promise<Response>;

/** A service binding gets the sandbox's hook path; a URL var is used exactly as given (chat webhooks have their own paths). */
function hookTarget(env: object): { url: string; send: Send } | null {
  const value = (env as Record<string, unknown>).APPROVAL_WEBHOOK;
  if (typeof value === "string" && /^https?:\/\//.test(value))
    return { url: value, send: (request) => fetch(request) };
  if (typeof value === "object" && value !== null && typeof (value as Fetcher).fetch === "function") {
    const fetcher = value as Fetcher;
    return { url: "https://upstream.internal/_hooks/approvals", send: (request) => fetcher.fetch(request) };
  }
  return null;
}

/**
 * Sends a JSON webhook for a new approval through the optional `APPROVAL_WEBHOOK` binding (a service
 * binding or a URL), so a team can page someone or post to chat. Best effort: a failing hook is
 * logged and never blocks or fails the agent's call.
 */
export async function notifyApproval(env: object, tenant: string, approval: ApprovalSummary): Promise<void> {
  const hook = hookTarget(env);
  if (!hook) return;
  try {
    const response = await hook.send(
      new Request(hook.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          type: "approval.created",
          tenant,
          approval,
          console_path: `/console/approvals/${approval.id}`,
        }),
        signal: AbortSignal.timeout(5_000),
      }),
    );
    await response.body?.cancel();
    if (!response.ok) console.warn(`approval webhook answered ${response.status}`);
  } catch (error) {
    console.warn("approval webhook failed", error);
  }
}
