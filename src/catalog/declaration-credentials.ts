import * as z from "zod";

/**
 * How a declared upstream is sent its credential (`upstreams.<NAME>.credential` of
 * `catalog/<namespace>.yaml`): part of the declaration format of declaration.ts, kept apart so
 * each stays a file one reads whole.
 */

const SecretNameSchema = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]*$/, "a Workers secret name such as SHIPMENTS_API_KEY");

const ProxyJwtCredentialSchema = z.strictObject({
  kind: z.literal("proxy_jwt"),
  /** The JWT's `aud`: the tool's name when absent; an MCP server is one audience for its tools. */
  audience: z.string().min(1).optional(),
});
/** Nothing is sent: a server reached only through a private binding. */
const NoCredentialSchema = z.strictObject({ kind: z.literal("none") });
const StaticHeaderCredentialSchema = z.strictObject({
  kind: z.literal("static_header"),
  header: z.string().min(1),
  secret: SecretNameSchema,
  prefix: z.string().optional(),
});
/**
 * An API key the API reads from a query parameter: added to each attempt's URL as it is sent, so
 * the request stored under the call's key, the trace and the logs never hold it. HTTP APIs only.
 */
const StaticQueryCredentialSchema = z.strictObject({
  kind: z.literal("static_query"),
  param: z.string().min(1),
  secret: SecretNameSchema,
});

export const CredentialSchema = z.discriminatedUnion("kind", [
  ProxyJwtCredentialSchema,
  NoCredentialSchema,
  StaticHeaderCredentialSchema,
]);
export const HttpCredentialSchema = z.discriminatedUnion("kind", [
  ProxyJwtCredentialSchema,
  NoCredentialSchema,
  StaticHeaderCredentialSchema,
  StaticQueryCredentialSchema,
]);
