import type { ToolSpec } from "../catalog/define-tool";
import { newPreviewRequestId } from "../core/ids";
import type { Env } from "../env";
import { upstreamTarget } from "../machine/request";
import type { StoredRequest } from "../machine/run-state";
import { catalog } from "../tools";
import { readForOperator } from "../upstream/operator-read";

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

const UNREAD = "The draft could not be read; do not approve a text you have not seen.";

/**
 * A call that sends a stored draft names only the draft (`draft_id`, at `draft_version`), so the
 * approval page reads the draft to show the operator the exact text that will go out. It is read
 * from the tool that stores drafts for the sending tool's namespace and upstream (`draftKeeperOf`),
 * in that tool's name. The approval itself stays bound to the version in the arguments: if the
 * draft changes, the upstream refuses the send (409) whatever was shown here. Null for a call that
 * names no draft.
 */
export async function draftPreview(
  env: Env,
  approval: { tool: string; tenant: string; run_id: string; args: Record<string, unknown> },
  namespace: string,
): Promise<DraftPreview | null> {
  const { draft_id: draftId, draft_version: approvedVersion } = approval.args;
  const sender = catalog.find(namespace, approval.tool);
  const sends = sender?.side_effect === "write" || sender?.side_effect === "destructive";
  if (!sender || !sends || typeof draftId !== "string" || typeof approvedVersion !== "number") return null;
  const preview: DraftPreview = {
    draft_id: draftId,
    approved_version: approvedVersion,
    current_version: null,
    subject: null,
    body: null,
    problem: null,
  };
  const unreachable = { ...preview, problem: "The email API is not reachable from here." };
  try {
    const keeper = draftKeeperOf(sender, catalog.tools(namespace));
    if (!keeper) return unreachable;
    const request: StoredRequest = {
      method: "GET",
      target: upstreamTarget(`${keeper.path}/${encodeURIComponent(draftId)}`),
      headers: { accept: "application/json", "x-request-id": newPreviewRequestId() },
      body: null,
    };
    const read = await readForOperator(env, approval, keeper.tool, request, PREVIEW_TIMEOUT_MS);
    if (!read) return unreachable;
    if (!read.ok) return { ...preview, problem: UNREAD };
    const draft = (read.data ?? {}) as { subject?: unknown; body?: unknown; version?: unknown };
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
    return { ...preview, problem: UNREAD };
  }
}

/**
 * The tool whose records a sender's drafts are, and where it keeps them: the tool of the sender's
 * namespace that stores drafts (side effect `draft`) on the sender's own upstream, over HTTP. It
 * creates a draft with a POST to its path, and the upstream serves each one under that path by
 * its id, to a credential in the keeper's name (the records are the keeper's, not the sender's).
 */
function draftKeeperOf(
  sender: ToolSpec,
  tools: readonly ToolSpec[],
): { tool: ToolSpec; path: string } | null {
  const binding = sender.upstream?.binding;
  for (const tool of tools) {
    const upstream = tool.upstream;
    if (tool.side_effect !== "draft" || !upstream || upstream.remote || upstream.binding !== binding)
      continue;
    // A keeper's path names no argument: every draft it stores is created at the same one.
    const created = upstream.request({});
    if (created.method === "POST") return { tool, path: created.path.replace(/\/+$/, "") };
  }
  return null;
}
