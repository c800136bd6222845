import type { CallToolResult } from "@modelcontextprotocol/client";
import type { RemoteTool, ToolSpec } from "../catalog/define-tool";
import type { Execution } from "../machine/request";
import type { StoredRequest } from "../machine/run-state";
import type { FailureSpec } from "../wire/envelope";
import type { AttemptRecord } from "../wire/trace-entry";
import { attachCredential } from "./attach-credential";
import type { Upstream } from "./bindings";
import { type Classification, classifyUpstream, tooLarge } from "./classify";
import type { CredentialRequest, UpstreamAuthorization } from "./credential";
import { afterAttempt, attemptTimeoutMs, dispatchEnd, effectAttempt } from "./dispatch";
import type { RemoteOutcome } from "./mcp-call";

/**
 * Stage "dispatch" for a tool of a remote MCP server: the same contract as `executeRequest` (reads
 * retried within their budget and the run's deadline, writes sent once, every answer classified here and a success's output
 * validated against the declared whitelist), with what MCP adds: the pin is checked before the
 * call, a JSON-RPC refusal is a refusal that did nothing, `isError` is the tool's own failure, and
 * unstructured content becomes `{ text, non_text }`.
 */

export interface RemoteExecuteInput {
  tool: ToolSpec;
  remote: RemoteTool;
  /** As stored under the key: `{"arguments": …, "name": …}`. */
  request: StoredRequest;
  tenant: string;
  upstream: Upstream;
  /** The same upstream with the call's planned fault: used for the `tools/call` message only. */
  faulted: Upstream;
  /** The credential of one HTTP message of the call, or null when the server takes none. */
  sign: (request: CredentialRequest) => Promise<UpstreamAuthorization | null>;
  /** The run's deadline (epoch ms): a read's retries end by then. */
  deadlineAt: number;
  /** The W3C `traceparent` every HTTP message of the call carries: the call's span in its trace. */
  traceparent: string;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The MCP client, loaded on the first remote call rather than when the isolate starts: a proxy that
 * serves no federated tool never evaluates the SDK (the bundler keeps a dynamic import's top level
 * unevaluated until it runs, as for the MCP server in src/http/lazy.ts).
 */
let remoteCalls: Promise<typeof import("./mcp-call")> | undefined;
function loadRemoteCalls() {
  remoteCalls ??= import("./mcp-call").catch((error: unknown) => {
    remoteCalls = undefined;
    throw error;
  });
  return remoteCalls;
}

export async function executeRemote(input: RemoteExecuteInput): Promise<Execution> {
  const { tool, remote, request } = input;
  const random = input.random ?? Math.random;
  const sleep = input.sleep ?? defaultSleep;
  const args = argumentsOf(request);
  const key = request.headers["idempotency-key"] ?? null;
  const attempts: AttemptRecord[] = [];
  const began = Date.now();
  const end = dispatchEnd(tool, began, input.deadlineAt);
  const { callRemote } = await loadRemoteCalls();
  for (;;) {
    const startedAt = Date.now();
    const outcome = await callRemote({
      remote,
      tenant: input.tenant,
      args,
      key,
      timeoutMs: attemptTimeoutMs(tool, startedAt, end),
      send: async (message, body, effect) => {
        const target = new URL(message.url);
        const credential = await input.sign({
          method: message.method,
          target: `${target.pathname}${target.search}`,
          body,
          idempotency_key: message.headers.get("idempotency-key"),
        });
        const url = new URL(message.url);
        attachCredential(url, message.headers, credential);
        message.headers.set("traceparent", input.traceparent);
        // A key in the query changes the URL, which a Request cannot: it is sent as a copy.
        const sent = url.href === message.url ? message : new Request(url, message);
        return (effect ? input.faulted : input.upstream).fetch(sent);
      },
    });
    const classification = classifyRemote(outcome, tool, remote);
    const status = outcome.kind === "http_error" ? outcome.status : outcome.kind === "result" ? 200 : null;
    attempts.push(
      effectAttempt(
        attempts.length + 1,
        startedAt,
        status,
        outcome.kind === "timeout" || outcome.kind === "network_error"
          ? outcome.kind
          : outcome.kind === "too_large"
            ? "invalid_body"
            : classification.kind === "success"
              ? "success"
              : "http_error",
      ),
    );
    const next = afterAttempt(tool, classification, status, attempts, { began, end }, random());
    if ("retryInMs" in next) await sleep(next.retryInMs);
    else if (next.ok || remote.server.honoured) return next;
    else return { ...next, failure: withoutResend(next.failure, tool) };
  }
}

function argumentsOf(request: StoredRequest): Record<string, unknown> {
  const parsed = JSON.parse(request.body ?? "{}") as { arguments?: Record<string, unknown> };
  return parsed.arguments ?? {};
}

/** The one place a remote call's outcome becomes ours. */
export function classifyRemote(outcome: RemoteOutcome, tool: ToolSpec, remote: RemoteTool): Classification {
  const read = tool.side_effect === "read";
  switch (outcome.kind) {
    case "drift":
      return {
        kind: "failure",
        status: null,
        transient: false,
        failure: {
          code: "upstream_changed",
          message:
            outcome.drift === "vanished"
              ? `The remote server no longer offers the tool this one calls (${remote.tool}), so the proxy did not call it. Use another tool or hand over to a human.`
              : `The remote tool ${remote.tool} changed since it was reviewed (its definition no longer matches the pin), so the proxy did not call it. Use another tool or hand over to a human; an operator re-pins it after review.`,
          side_effect_confirmed: false,
          recommended_next_action: "escalate_to_human",
          details: {
            server: remote.server.name,
            remote_tool: remote.tool,
            drift: outcome.drift,
            pinned: remote.pin,
            live: outcome.live_pin,
          },
        },
      };
    case "result":
      return outcome.result.isError
        ? toolError(outcome.result, read)
        : { kind: "success", status: 200, body: bodyOf(outcome.result) };
    case "too_large":
      // Past a bound during the handshake or the listing, the tool was not called.
      return {
        kind: "failure",
        status: null,
        transient: false,
        failure:
          outcome.stage === "connect"
            ? {
                ...tooLarge({ status: null, exceeded: outcome.exceeded }, "read"),
                message: `The remote server's answer before the call was larger than the proxy keeps (more than ${outcome.exceeded.max} ${outcome.exceeded.bound}); the tool was not called. Hand over to a human.`,
              }
            : tooLarge({ status: null, exceeded: outcome.exceeded }, tool.side_effect),
      };
    case "rpc_error":
      return {
        kind: "failure",
        status: null,
        transient: !outcome.refused,
        failure: outcome.refused
          ? {
              code: "terminal_error",
              message: `The remote server refused the call before running it (JSON-RPC ${outcome.code}). It will not succeed on retry; hand over to a human.`,
              side_effect_confirmed: false,
              recommended_next_action: "escalate_to_human",
              details: { rpc_code: outcome.code },
            }
          : {
              code: "transient_error",
              message: read
                ? "The remote server failed while running the tool. Retrying is safe."
                : "The remote server failed while running the tool; it may or may not have acted.",
              side_effect_confirmed: read ? false : null,
              details: { rpc_code: outcome.code },
            },
      };
    default:
      if (outcome.stage === "connect") {
        // Nothing reached the tool: the handshake or the listing failed.
        return {
          kind: "failure",
          status: outcome.kind === "http_error" ? outcome.status : null,
          transient: outcome.kind !== "http_error" || outcome.status >= 500 || outcome.status === 429,
          failure: {
            code:
              outcome.kind === "http_error" && outcome.status < 500 ? "permission_error" : "transient_error",
            message:
              outcome.kind === "http_error" && outcome.status < 500
                ? `The remote server refused the connection (HTTP ${outcome.status}); the tool was not called.`
                : "The remote server could not be reached; the tool was not called. Retrying with the same arguments is safe.",
            side_effect_confirmed: false,
            details: outcome.kind === "http_error" ? { upstream_status: outcome.status } : null,
          },
        };
      }
      if (outcome.kind === "network_error") {
        // The call left and the connection broke before its answer was read: not "unreachable".
        return {
          kind: "failure",
          status: null,
          transient: true,
          failure: {
            code: "transient_error",
            message: read
              ? "The connection to the remote server broke before its answer arrived. Retrying is safe."
              : "The connection to the remote server broke before its answer arrived; it may or may not have acted. Call again with the same arguments: the same idempotency key is sent, so it cannot happen twice.",
            side_effect_confirmed: read ? false : null,
          },
        };
      }
      return classifyUpstream(
        outcome.kind === "http_error"
          ? { kind: "response", status: outcome.status, contentType: "", retryAfter: null, body: "" }
          : { kind: outcome.kind },
        tool.side_effect,
      );
  }
}

/** A tool's own failure (`isError`): a read did nothing; whether a write acted is unknown. */
function toolError(result: CallToolResult, read: boolean): Classification {
  const code = remoteErrorCode(result);
  return {
    kind: "failure",
    status: 200,
    transient: false,
    failure: {
      code: code === "not_found" ? "not_found" : "terminal_error",
      message: `The remote tool answered with an error${code ? ` (${code})` : ""}. ${
        read
          ? "Check the arguments, or hand over to a human."
          : "Whether it acted is unknown: check with a read tool before acting again."
      }`,
      side_effect_confirmed: read || code === "not_found" ? false : null,
      recommended_next_action:
        code === "not_found" ? "fix_arguments" : read ? "escalate_to_human" : "reconcile",
      details: code ? { remote_code: code } : null,
    },
  };
}

/** The server's own error code, when its text is `{"error": {"code": …}}`; never its message. */
function remoteErrorCode(result: CallToolResult): string | null {
  for (const block of result.content ?? []) {
    if (block.type !== "text") continue;
    try {
      const code = (JSON.parse(block.text) as { error?: { code?: unknown } }).error?.code;
      if (typeof code === "string" && /^[a-z0-9_]{1,64}$/.test(code)) return code;
    } catch {
      // not JSON: no code to keep
    }
  }
  return null;
}

/**
 * What the declared output is checked against: `structuredContent` when the server sends it, else
 * the content as `{ text, non_text }`: text blocks joined, every other block described by kind and
 * size, never passed on raw.
 */
function bodyOf(result: CallToolResult): unknown {
  if (result.structuredContent && typeof result.structuredContent === "object")
    return result.structuredContent;
  const text: string[] = [];
  const nonText: string[] = [];
  for (const block of result.content ?? []) {
    if (block.type === "text") text.push(block.text);
    else if (block.type === "image" || block.type === "audio") {
      nonText.push(`${block.type} (${block.mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes)`);
    } else if (block.type === "resource_link") nonText.push(`a link to the resource ${block.uri}`);
    else if (block.type === "resource") nonText.push(`an embedded resource (${block.resource.uri})`);
    else nonText.push(`a ${String((block as { type?: unknown }).type)} block`);
  }
  return { text: text.join("\n\n"), non_text: nonText };
}

/**
 * A write in doubt on a server that does not honour keys: the proxy will not send it again, so the
 * answer must not invite a retry; what settles it is a read.
 */
function withoutResend(failure: FailureSpec, tool: ToolSpec): FailureSpec {
  if (tool.side_effect === "read" || failure.side_effect_confirmed !== null) return failure;
  const check = tool.observe
    ? ` Check with ${tool.observe.tool} whether it happened.`
    : " Check with a read tool whether it happened.";
  return {
    ...failure,
    // Its own words, not the usual failure's: those invite the retry this server cannot take.
    message: `The call reached the remote server, but its answer was lost or failed (${failure.code}), so whether it acted is unknown. This server does not honour idempotency keys, so the proxy will not send this call again.${check}`,
    recommended_next_action: "reconcile",
    outcome: "terminal_failure",
    details: { ...failure.details, resend: "never: the server does not honour idempotency keys" },
  };
}
