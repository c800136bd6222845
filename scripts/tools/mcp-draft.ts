// A remote MCP server's listed tools to a draft namespace (the catalog format of
// catalog/schema.json), in the manner of the OpenAPI importer: what the server says is filled in,
// what only a human can decide is proposed behind a draft marker that `check` refuses, and the
// server's claims (its annotations) are proposals, never decisions.
import { defaultToolsNote, draftDefaultTools, tooManyTools } from "./default-tools-draft";
import { type Pins, pinDigest, pinnedDefinition } from "./mcp-pins";
import type { ListedTool } from "./mcp-remote";
import { inlineRefs, strictInput } from "./mcp-schema";
import { draftUpstream } from "./mcp-upstream";
import { credentialMarkers, REVIEW, snakeCase } from "./openapi-operations.mjs";
import { freeTextPaths, toCatalogSchema } from "./openapi-schema.mjs";
import type { ProxyOrigins } from "./upstream-hosts";

const NAMESPACE = /^[a-z][a-z0-9_]*$/;
// Within the catalog rule by class (src/catalog/timeout-rules.ts): relaxed reads, strict keyed calls.
const TIMEOUT_MS = { read: 10_000, write: 5000, destructive: 5000 } as const;

/**
 * The output of a tool without an `outputSchema`: what the proxy makes of its content blocks. The
 * text blocks' text, joined, is the server's words (untrusted until a human says otherwise); the
 * other blocks are described by the proxy, never passed on raw.
 */
export const UNSTRUCTURED_OUTPUT = {
  type: "object",
  properties: {
    text: { type: "string", description: "The tool's text content, joined." },
    non_text: {
      type: "array",
      items: { type: "string" },
      description: "What each non-text block was (an image, a resource), described, never passed raw.",
    },
  },
  required: ["text"],
} as const;

/** A refusal the command line prints as it is: a bad namespace, an unknown tool, more tools than a namespace holds. */
export class DraftError extends Error {}

export interface Problem {
  location: string;
  message: string;
}

export interface DraftedRemoteTool {
  name: string;
  remote: string;
  sideEffect: "read" | "write" | "destructive";
  review: string[];
}

export type Declaration = Record<string, unknown>;

export interface RemoteDraft {
  binding: string;
  declaration: {
    format: 1;
    namespace: string;
    upstreams: Record<string, Declaration>;
    /** Proposed behind a draft marker when more tools are drafted than a run lists at once. */
    default_tools?: { draft: string[]; why: string };
    tools: Declaration[];
  };
  /** The reviewed definitions, by the server's tool name: catalog/<ns>.pins.json. */
  pins: Pins;
  tools: DraftedRemoteTool[];
  upstreamComment: string;
  problems: Problem[];
  notes: string[];
}

export interface DraftOptions {
  namespace: string;
  url: string;
  headers: Record<string, string>;
  /** The tools asked for, by the server's name or its snake_case; all when null. */
  only: string[] | null;
  /** The proxy's own origins, never proposed as a base (`npm start`'s when not given). */
  own?: ProxyOrigins;
}

export function draftRemoteNamespace(listed: readonly ListedTool[], options: DraftOptions): RemoteDraft {
  const { namespace } = options;
  if (!NAMESPACE.test(namespace)) {
    throw new DraftError(
      `--namespace ${namespace}: use lower case letters, digits and _, starting with a letter`,
    );
  }
  const binding = `${namespace.toUpperCase()}_MCP`;
  const problems: Problem[] = [];
  const report = (location: string, message: string) => problems.push({ location, message });
  const chosen = chooseTools(listed, options.only);

  const tools: Declaration[] = [];
  const drafted: DraftedRemoteTool[] = [];
  const pins: Pins = {};
  const owners = new Map<string, string>();
  for (const tool of chosen) {
    const at = `tools/list: ${tool.name}`;
    const name = snakeCase(tool.name);
    const owner = owners.get(name);
    if (owner !== undefined) {
      report(at, `its name becomes ${name}, as ${owner}'s does; not drafted (import one with --tools)`);
      continue;
    }
    if (tool.execution?.taskSupport === "required") {
      report(`${at}.execution.taskSupport`, "a tool called only as a task is not supported; not drafted");
      continue;
    }
    const draft = draftRemoteTool(tool, name, binding, (where, message) => report(`${at}.${where}`, message));
    if (!draft) {
      report(at, "not drafted");
      continue;
    }
    owners.set(name, tool.name);
    tools.push(draft.tool);
    drafted.push({ name, remote: tool.name, sideEffect: draft.sideEffect, review: draft.review });
    pins[tool.name] = pinnedDefinition(tool);
  }
  const tooMany = tooManyTools(tools.length, "--tools");
  if (tooMany) throw new DraftError(`the server lists ${tooMany}`);
  proposeReadBacks(tools);
  const upstream = draftUpstream(options, binding);
  const defaults = draftDefaultTools(drafted.map((tool) => tool.name));
  return {
    binding,
    declaration: {
      format: 1,
      namespace,
      upstreams: { [binding]: upstream.declaration },
      ...(defaults ? { default_tools: defaults } : {}),
      tools,
    },
    pins,
    tools: drafted,
    upstreamComment: upstream.comment,
    problems,
    notes: defaults ? [...upstream.review, defaultToolsNote(tools.length)] : upstream.review,
  };
}

function chooseTools(listed: readonly ListedTool[], only: string[] | null): readonly ListedTool[] {
  if (!only) return listed;
  const names = (tool: ListedTool) => [tool.name, snakeCase(tool.name)];
  const unknown = only.filter((name) => !listed.some((tool) => names(tool).includes(name)));
  if (unknown.length > 0) {
    throw new DraftError(
      `--tools: the server lists no tool ${unknown.join(", ")}; it lists ${listed.map((tool) => tool.name).join(", ") || "none"}`,
    );
  }
  return listed.filter((tool) => names(tool).some((name) => only.includes(name)));
}

function proposedSideEffect(annotations: ListedTool["annotations"]): DraftedRemoteTool["sideEffect"] {
  if (annotations?.readOnlyHint === true) return "read";
  if (annotations?.destructiveHint === true) return "destructive";
  return "write";
}

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

function draftRemoteTool(
  tool: ListedTool,
  name: string,
  binding: string,
  report: (location: string, message: string) => void,
): { tool: Declaration; sideEffect: DraftedRemoteTool["sideEffect"]; review: string[] } | null {
  const input = strictInput(tool.inputSchema, report);
  if (!input) return null;
  const output = outputOf(tool, report);
  if (!output) return null;

  const sideEffect = proposedSideEffect(tool.annotations);
  const writes = sideEffect !== "read";
  const claims = HINTS.filter((hint) => typeof tool.annotations?.[hint] === "boolean")
    .map((hint) => `${hint}: ${tool.annotations?.[hint]}`)
    .join(", ");
  const does = tool.description?.trim().replace(/\s+/g, " ");
  // A credential the server takes as an argument would be the model's to fill: a reviewer decides.
  const notCredentials = credentialMarkers(input);
  const review = [
    "side_effect",
    "description",
    ...(Object.keys(notCredentials).length > 0
      ? [
          `not_credentials (${Object.keys(notCredentials).length} field${Object.keys(notCredentials).length === 1 ? "" : "s"})`,
        ]
      : []),
    ...output.review,
  ];
  const declaration: Declaration = {
    name,
    version: "1",
    title: tool.title?.trim() || tool.annotations?.title?.trim() || humanised(tool.name),
    side_effect: {
      draft: sideEffect,
      why: `proposed from the server's annotations (${claims || "none"}): the server's claim, not ours`,
    },
    description: {
      does: does || `${REVIEW} what the tool does, in one sentence`,
      use_when: `${REVIEW} when a model should call it, with an example call such as ${name}({...})`,
      avoid_when: `${REVIEW} when it should not, and which tool to use instead`,
      side_effects: writes
        ? `${REVIEW} what changes on the server, and what a repeat of the same call does`
        : `${REVIEW} proposed: None. Reads only.`,
    },
    timeout_ms: TIMEOUT_MS[sideEffect],
    input,
    ...(Object.keys(notCredentials).length > 0 ? { not_credentials: notCredentials } : {}),
    request: { upstream: binding, tool: tool.name, pin: pinDigest(pinnedDefinition(tool)) },
    output: output.declaration,
  };
  // Ours are verb_noun (the check refuses others); the server's own name stays in request.tool.
  if (!/^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(name)) {
    review.push(
      `name: ${name} is not verb_noun; rename it (such as ${name}_item), request.tool keeps ${tool.name}`,
    );
  }
  if (writes) {
    declaration.postcondition = `${REVIEW} which read tool reads the effect back and which fields must match, or no_postcondition: <why>`;
    declaration.dry_run = `${REVIEW} what the sandbox server simulates, and what only production reveals`;
    review.push("postcondition", "dry_run");
  }
  return { tool: declaration, sideEffect, review };
}

/** `search_articles` → `Search articles`, for a tool without a title. */
function humanised(name: string): string {
  const words = snakeCase(name).replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function outputOf(
  tool: ListedTool,
  report: (location: string, message: string) => void,
): { declaration: Declaration; review: string[] } | null {
  if (tool.outputSchema === undefined) {
    return {
      declaration: {
        schema: structuredClone(UNSTRUCTURED_OUTPUT) as unknown as Declaration,
        untrusted: ["text"],
        trusted_text: { "non_text[]": "the proxy's own description of a block's kind and size" },
      },
      review: [],
    };
  }
  const resolved = inlineRefs(tool.outputSchema, tool.outputSchema, "outputSchema", report);
  if (resolved === undefined) return null;
  const schema = toCatalogSchema(resolved, "output", "outputSchema", report);
  if (!schema) return null;
  const free = freeTextPaths(schema);
  const trustedText = Object.fromEntries(
    free.map((path) => [
      path,
      `${REVIEW} untrusted or trusted? If third parties can write it, move it to untrusted; else give the reason.`,
    ]),
  );
  return {
    declaration: { schema, ...(free.length > 0 ? { trusted_text: trustedText } : {}) },
    review:
      free.length > 0 ? [`output.trusted_text (${free.length} field${free.length === 1 ? "" : "s"})`] : [],
  };
}

/**
 * Names a candidate for each write's postcondition, still behind the marker: a read of the same
 * server whose required arguments the write also takes (`get_ticket_notes` for `add_ticket_note`).
 */
function proposeReadBacks(tools: Declaration[]): void {
  const inputOf = (tool: Declaration) =>
    tool.input as { properties: Record<string, unknown>; required?: string[] };
  const isRead = (tool: Declaration) => (tool.side_effect as { draft: string }).draft === "read";
  for (const write of tools.filter((tool) => typeof tool.postcondition === "string")) {
    const read = tools.find(
      (tool) =>
        isRead(tool) &&
        (inputOf(tool).required ?? []).length > 0 &&
        (inputOf(tool).required ?? []).every((field) => field in inputOf(write).properties),
    );
    if (!read) continue;
    const args = (inputOf(read).required ?? []).map((field) => `${field}: {arg: /${field}}`).join(", ");
    write.postcondition = `${REVIEW} proposed: tool ${String(read.name)}, args {${args}}, expect the fields this write changes; or no_postcondition: <why>`;
  }
}
