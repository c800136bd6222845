import type { ToolSpec } from "../catalog/define-tool";
import { resolveSubset, toolRef } from "../catalog/subset";
import type { ToolVersion } from "../catalog/tool-version";
import { loadConfig } from "../config/load";
import { sha256Hex } from "../core/digest";
import type { Env } from "../env";
import type { AddToolsAnswer } from "../ledger/ledger-api";
import { grantedTools, type RunToolSet, reachOf, runTools } from "../machine/grants";
import type { RunMeta } from "../machine/run-state";
import { isPinned, pinsOf, type ToolPins } from "../machine/tool-pins";
import { catalog, discoveryTools } from "../tools";

/** The run's tool set (opened subset, added tools, reach), for its spec export. */
export function toolSetOf(run: RunMeta): RunToolSet {
  return {
    namespace: run.namespace,
    tools: run.tools ?? null,
    added_tools: run.added_tools ?? [],
    reach: reachOf(run),
  };
}

/**
 * Granted tools added to an open run, by name (`POST /v1/runs/{run_id}/tools`): checked against the
 * tenant's grants as they are now, so nothing outside them is ever added. Tools the run has already
 * are left as they are. The run's added tools as they are to be stored, or why none are.
 */
export function toolsToAdd(
  env: Env,
  run: RunMeta | null,
  asked: string[],
): Exclude<AddToolsAnswer, { kind: "added" }> | { kind: "add"; run: RunMeta; added: string[] } {
  if (!run) return { kind: "not_found" };
  if (run.state === "closed") return { kind: "closed" };
  const namespaces = loadConfig(env).tenants[run.tenant]?.namespaces ?? [];
  const have = runTools(catalog, run, [])
    .filter((tool) => tool.builtin === null)
    .map(toolRef);
  const resolved = resolveSubset(grantedTools(catalog, reachOf(run), namespaces), asked, "tools", have);
  if (!resolved.ok) return { kind: "refused", problems: resolved.problems };
  return {
    kind: "add",
    run,
    added: [...(run.added_tools ?? []), ...resolved.refs.filter((ref) => !have.includes(ref))],
  };
}

/** What a new run is shown: the catalog's version, and the version of each tool it lists (its pins). */
export interface ShownTools {
  catalog_version: string;
  tool_versions: ToolPins;
}

/** The hex digits of a tool's digest in `toolsSeenBy`: a short one each, so a token stays small. */
const SEEN_DIGITS = 6;

/** Digests already taken in this isolate, by tool and version: every open without a task key takes them. */
const seen = new WeakMap<ToolSpec, { version: string; digest: Promise<string> }>();

function seenDigest(tool: ToolSpec, version: ToolVersion): Promise<string> {
  const known = seen.get(tool);
  if (known?.version === version.version) return known.digest;
  const digest = sha256Hex(`${tool.namespace}.${tool.name} ${version.version}`).then((hex) =>
    hex.slice(0, SEEN_DIGITS),
  );
  seen.set(tool, { version: version.version, digest });
  return digest;
}

/** The tools a run of `set` lists now, with their versions. */
async function listedNow(set: RunToolSet): Promise<{ tools: ToolSpec[]; versions: ToolVersion[] }> {
  const tools = runTools(catalog, set, discoveryTools(set.namespace)).filter(isPinned);
  return { tools, versions: await Promise.all(tools.map((tool) => catalog.toolVersion(tool))) };
}

/**
 * What an open that stores nothing carries of the tools it showed (its run token's `tools_seen`): a
 * short digest of each one's name and version, so the run it creates later pins each tool it was
 * shown unchanged, and only those.
 */
export async function toolsSeenBy(set: RunToolSet): Promise<string> {
  const { tools, versions } = await listedNow(set);
  const digests = await Promise.all(
    tools.map((tool, index) => seenDigest(tool, versions[index] as ToolVersion)),
  );
  return digests.join("");
}

/**
 * What a run opened with `set` is shown now: each tool it lists, at its version now. A run created
 * later from an open that stored nothing (`shownUnder`: what that open's token carries) pins the
 * tools the open showed as they are now only where their version has not moved since; any other
 * tool it pins as unknown, so its first call says the tool may have changed. A token from before
 * tools were carried is judged by the catalog's version alone.
 */
export async function shownTools(
  set: RunToolSet,
  shownUnder?: { catalog_version: string; tools_seen?: string | undefined },
): Promise<ShownTools> {
  const current = await catalog.version();
  const { tools, versions } = await listedNow(set);
  if (shownUnder === undefined) return { catalog_version: current, tool_versions: pinsOf(tools, versions) };
  const carried = shownUnder.tools_seen;
  const unchanged = await Promise.all(
    tools.map(async (tool, index) => {
      const version = versions[index] as ToolVersion;
      if (carried === undefined) return shownUnder.catalog_version === current ? version : null;
      const digest = await seenDigest(tool, version);
      for (let at = 0; at < carried.length; at += SEEN_DIGITS) {
        if (carried.slice(at, at + SEEN_DIGITS) === digest) return version;
      }
      return null;
    }),
  );
  return { catalog_version: shownUnder.catalog_version, tool_versions: pinsOf(tools, unchanged) };
}
