import { environmentOf } from "../config/environment";
import { loadConfig } from "../config/load";
import { newPreviewRequestId } from "../core/ids";
import type { Env } from "../env";
import { upstreamTarget } from "../machine/request";
import type { StoredRequest } from "../machine/run-state";
import { catalog } from "../tools";
import { resolveUpstream } from "../upstream/bindings";
import { bearer, credentialExpiry, issueUpstreamCredential } from "../upstream/credential";
import { sendAttempt } from "../upstream/send-attempt";

/** What an operator approving a send reads: the stored draft's text at the version the call names. */
export interface DraftPreview {
  draft_id: string;
  approved_version: number;
  current_version: number | null;
  subject: string | null;
  body: string | null;
  /** Set when the text could not be read, or no longer is the version the approval is for. */
  problem: string | null;
}

const PREVIEW_TIMEOUT_MS = 2_500;

/**
 * A send names only a draft, so the approval page reads the draft from the email API (with a
 * credential for `draft_customer_email`, the tool whose records drafts are) to show the operator
 * the exact text that will go out. The approval itself stays bound to the version in the
 * arguments: if the draft changes, the upstream refuses the send (409) whatever was shown here.
 */
export async function draftPreview(
  env: Env,
  approval: { tool: string; tenant: string; run_id: string; args: Record<string, unknown> },
): Promise<DraftPreview | null> {
  if (approval.tool !== "send_customer_email") return null;
  const draftId = String(approval.args.draft_id ?? "");
  const approvedVersion = Number(approval.args.draft_version);
  const preview: DraftPreview = {
    draft_id: draftId,
    approved_version: approvedVersion,
    current_version: null,
    subject: null,
    body: null,
    problem: null,
  };
  const reader = catalog.tools("support").find((tool) => tool.name === "draft_customer_email");
  const upstream = reader?.upstream ? resolveUpstream(env, reader.upstream, environmentOf(env)) : null;
  if (!reader || !upstream) return { ...preview, problem: "The email API is not reachable from here." };
  try {
    const now = Date.now();
    const request: StoredRequest = {
      method: "GET",
      target: upstreamTarget(`/email-drafts/${encodeURIComponent(draftId)}`),
      headers: { accept: "application/json", "x-request-id": newPreviewRequestId() },
      body: null,
    };
    const credential = await issueUpstreamCredential(
      {
        tenant: approval.tenant,
        run: approval.run_id,
        tool: reader.name,
        exp: credentialExpiry(now, PREVIEW_TIMEOUT_MS),
        request: { method: request.method, target: request.target, body: null, idempotency_key: null },
      },
      loadConfig(env).upstreamSigningKeys,
      now,
    );
    const result = await sendAttempt({
      upstream,
      request,
      credential: bearer(credential),
      timeoutMs: PREVIEW_TIMEOUT_MS,
      traceparent: null,
    });
    if (result.kind !== "response" || result.status !== 200) {
      return { ...preview, problem: "The draft could not be read; do not approve a text you have not seen." };
    }
    const draft = JSON.parse(result.body) as { subject?: unknown; body?: unknown; version?: unknown };
    const current = typeof draft.version === "number" ? draft.version : null;
    return {
      ...preview,
      current_version: current,
      subject: typeof draft.subject === "string" ? draft.subject : null,
      body: typeof draft.body === "string" ? draft.body : null,
      problem:
        current === approvedVersion
          ? null
          : `The draft was edited since (now version ${current}); this send will be refused and nothing sent.`,
    };
  } catch {
    return { ...preview, problem: "The draft could not be read; do not approve a text you have not seen." };
  }
}
