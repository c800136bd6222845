import * as z from "zod";
import type { ProxyConfig } from "../config/load";
import { lazily } from "../core/lazily";
import type { RunLimits } from "../wire/run-status";
import { findKeyOwner } from "./keys";

/**
 * Agent keys: long-lived secrets an agent (an MCP client, a framework's tool loop) holds instead of
 * a run token. Each is issued for one of its tenant's agent profiles, which names the namespace and
 * the limits every run opened with the key gets. The secret `AGENT_KEYS` holds only hashes,
 * `{ tenant: { profile: [sha256 hex, ...] } }`: two hashes under one profile during a rotation.
 */

/** Who is calling with an agent key (or an OAuth access token granted for a profile). */
export interface AgentPrincipal {
  tenant: string;
  profile: string;
  namespace: string;
  /** The limits a run opened by this agent asks for (the profile's, the rest defaults). */
  limits: Partial<RunLimits>;
  /** The tools its runs open with, as the profile names them; absent: the whole namespace. */
  tools?: string[];
  via: "agent_key" | "oauth";
}

/** `AGENT_KEYS`: absent means the deployment issues no agent keys. */
export function parseAgentKeyHashes(raw: string | undefined): Map<string, Map<string, string[]>> {
  const map = new Map<string, Map<string, string[]>>();
  if (raw === undefined || raw.trim() === "") return map;
  const hex = z.string().regex(/^[0-9a-f]{64}$/);
  const parsed = z.record(z.string(), z.record(z.string(), z.array(hex).min(1))).safeParse(safeJson(raw));
  if (!parsed.success) {
    throw new Error(
      "AGENT_KEYS must be a JSON object mapping each tenant to { profile: [SHA-256 hex key hashes] }",
    );
  }
  for (const [tenant, profiles] of Object.entries(parsed.data)) {
    map.set(tenant, new Map(Object.entries(profiles)));
  }
  return map;
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** The principal an agent key stands for, or null when it is no agent key (compared in constant time). */
export async function findAgentKey(presented: string, config: ProxyConfig): Promise<AgentPrincipal | null> {
  // Flattened to "tenant/profile" owners so every stored hash is compared, as for the other keys.
  const owners = new Map<string, string[]>();
  for (const [tenant, profiles] of config.agentKeyHashes) {
    for (const [profile, hashes] of profiles) owners.set(`${tenant}/${profile}`, hashes);
  }
  const owner = await findKeyOwner(presented, owners);
  if (!owner) return null;
  const [tenant = "", profile = ""] = owner.split("/");
  return agentPrincipal(config, tenant, profile, "agent_key");
}

/**
 * The principal of a tenant's profile, read from the configuration now (so a changed profile
 * applies to the next run), or null when the tenant or profile no longer exists.
 */
export function agentPrincipal(
  config: ProxyConfig,
  tenant: string,
  profile: string,
  via: AgentPrincipal["via"],
): AgentPrincipal | null {
  const settings = config.tenants[tenant]?.agent_profiles[profile];
  if (!settings) return null;
  return {
    tenant,
    profile,
    namespace: settings.namespace,
    limits: settings.limits,
    ...(settings.tools === undefined ? {} : { tools: settings.tools }),
    via,
  };
}

/**
 * What an OAuth grant records about the agent it admits (the provider stores it encrypted with the
 * grant and hands it back on every request as `ctx.props`): the tenant and the agent profile an
 * operator chose on the consent page. Namespace and limits are read from the configuration then.
 */
const oAuthGrantPropsSchema = lazily(() => z.strictObject({ tenant: z.string(), profile: z.string() }));
export type OAuthGrantProps = z.infer<ReturnType<typeof oAuthGrantPropsSchema>>;

/**
 * The grant an OAuth access token's props record, or null when they are not a grant of ours. Props
 * without a `tenant` (a request that came with a key or a run token has none) are told apart
 * without the schema.
 */
export function grantOf(props: unknown): OAuthGrantProps | null {
  if (typeof props !== "object" || props === null || !("tenant" in props)) return null;
  const parsed = oAuthGrantPropsSchema().safeParse(props);
  return parsed.success ? parsed.data : null;
}

/** The principal of an OAuth grant, or null when its tenant or profile no longer exists. */
export function agentOfGrant(config: ProxyConfig, grant: OAuthGrantProps): AgentPrincipal | null {
  return agentPrincipal(config, grant.tenant, grant.profile, "oauth");
}
