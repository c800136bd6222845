import {
  CimdFetchError,
  type ClientInfo,
  type GrantSummary,
  type OAuthHelpers,
} from "@cloudflare/workers-oauth-provider";
import { type GrantMetadata, grantOwnerOf } from "./provider";

/** A grant of the tenant as the console lists it. */
export interface TenantGrant {
  id: string;
  clientId: string;
  /** The name the client registered with: self-asserted, shown as such. */
  clientName: string | null;
  redirectUri: string | null;
  profile: string | null;
  /** Who consented, `operator:<key fingerprint>`. */
  operator: string | null;
  createdAt: number;
  /** Unix seconds; absent until the client redeems its authorization code. */
  expiresAt: number | null;
}

/** A client that holds grants of the tenant. */
export interface TenantClient {
  clientId: string;
  clientName: string | null;
  redirectUris: string[];
  registeredAt: number | null;
  grants: number;
}

/** More than an operator can read on one page; a tenant with more has a problem the page should not hide. */
const MAX_GRANTS = 1000;

/** Grant and client ids are random letters and digits; anything else is not looked up. */
export const OAUTH_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** A client that names itself by its metadata document's https URL (MCP 2026-07-28). */
const METADATA_DOCUMENT_CLIENT_ID = /^https:\/\/[^\s]{1,2000}$/;

/**
 * A client as the provider knows it; null when it does not, or when the client's metadata document
 * cannot be fetched now: the tenant's grants stay listed (and revocable) under its URL.
 */
async function clientInfoOf(api: OAuthHelpers, clientId: string): Promise<ClientInfo | null> {
  try {
    return await api.lookupClient(clientId);
  } catch (error) {
    if (error instanceof CimdFetchError) return null;
    throw error;
  }
}

function metadataOf(grant: GrantSummary): Partial<GrantMetadata> {
  const metadata: unknown = grant.metadata;
  return typeof metadata === "object" && metadata !== null ? (metadata as Partial<GrantMetadata>) : {};
}

async function tenantGrantSummaries(api: OAuthHelpers, tenant: string): Promise<GrantSummary[]> {
  const owner = grantOwnerOf(tenant);
  const grants: GrantSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.listUserGrants(owner, cursor === undefined ? {} : { cursor });
    grants.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined && grants.length < MAX_GRANTS);
  // The owner already is the tenant; the metadata check keeps it so if the owner scheme ever changes.
  return grants.filter((grant) => metadataOf(grant).tenant === tenant);
}

/**
 * The tenant's grants, newest first, and the clients holding them. Clients register anonymously
 * and are shared by every tenant, so the tenant sees only those it granted access to.
 */
export async function listTenantGrants(
  api: OAuthHelpers,
  tenant: string,
): Promise<{ grants: TenantGrant[]; clients: TenantClient[] }> {
  const summaries = await tenantGrantSummaries(api, tenant);
  const clientIds = [...new Set(summaries.map((grant) => grant.clientId))];
  const found = await Promise.all(clientIds.map((clientId) => clientInfoOf(api, clientId)));
  const infos = new Map(clientIds.map((clientId, index) => [clientId, found[index] ?? null]));

  const grants = summaries
    .map((grant): TenantGrant => {
      const metadata = metadataOf(grant);
      return {
        id: grant.id,
        clientId: grant.clientId,
        clientName: infos.get(grant.clientId)?.clientName ?? null,
        redirectUri: grant.redirectUri ?? null,
        profile: metadata.profile ?? null,
        operator: metadata.operator ?? null,
        createdAt: grant.createdAt,
        expiresAt: grant.expiresAt ?? null,
      };
    })
    .sort((a, b) => b.createdAt - a.createdAt);
  const clients = clientIds.map((clientId): TenantClient => {
    const info = infos.get(clientId) ?? null;
    return {
      clientId,
      clientName: info?.clientName ?? null,
      redirectUris: info?.redirectUris ?? [],
      registeredAt: info?.registrationDate ?? null,
      grants: grants.filter((grant) => grant.clientId === clientId).length,
    };
  });
  return { grants, clients };
}

/**
 * Revokes one grant of the tenant with its tokens; false when the tenant has no such grant. The
 * grant is looked up under the tenant's own owner id, so another tenant's grant is "not found".
 */
export async function revokeTenantGrant(
  api: OAuthHelpers,
  tenant: string,
  grantId: string,
): Promise<boolean> {
  if (!OAUTH_ID.test(grantId)) return false;
  const grants = await tenantGrantSummaries(api, tenant);
  if (!grants.some((grant) => grant.id === grantId)) return false;
  await api.revokeGrant(grantId, grantOwnerOf(tenant));
  return true;
}

/**
 * Disconnects a client from the tenant: revokes every grant of the tenant it holds, and returns how
 * many. The registration itself stays: other tenants may use the same client, and deleting it
 * (the provider's `deleteClient`) would revoke their grants too.
 */
export async function revokeTenantClient(
  api: OAuthHelpers,
  tenant: string,
  clientId: string,
): Promise<number> {
  if (!OAUTH_ID.test(clientId) && !METADATA_DOCUMENT_CLIENT_ID.test(clientId)) return 0;
  const grants = (await tenantGrantSummaries(api, tenant)).filter((grant) => grant.clientId === clientId);
  await Promise.all(grants.map((grant) => api.revokeGrant(grant.id, grantOwnerOf(tenant))));
  return grants.length;
}
