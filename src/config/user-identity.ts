import * as z from "zod";

/**
 * How a tenant's runs learn whom they act for: the identity provider whose signed assertions (JWTs)
 * an orchestrator presents when it opens a run (`X-User-Assertion`). The issuer and audience are
 * checked exactly; the keys are a JWK Set given inline, or fetched from `jwks_uri` through the
 * egress guard (https, public hosts, bounded time and size, remembered for a minute).
 */
export const userIdentitySchema = () =>
  z
    .strictObject({
      /** The assertion's `iss`, exactly. */
      issuer: z.string().min(1),
      /** The assertion's `aud` must name this (the proxy, as the tenant's provider calls it). */
      audience: z.string().min(1),
      /** The provider's public keys, inline: a JWK Set. */
      jwks: z.strictObject({ keys: z.array(z.record(z.string(), z.unknown())).min(1) }).optional(),
      /** Where the provider publishes its public keys (https). */
      jwks_uri: z.url({ protocol: /^https$/, error: "must be an https URL" }).optional(),
      /** Every run must name a user: an open without an assertion is refused. */
      required: z.boolean().default(false),
      /** How far the clocks of the provider and the proxy may disagree on `exp` and `nbf`, in seconds. */
      clock_skew_s: z.number().int().min(0).max(300).default(30),
      /**
       * What one user's runs together may do in a UTC day: destructive calls, and value moved per
       * currency (ISO 4217 code → minor units). Held by the tenant's effect shards and reserved
       * before a request leaves, as the tenant's other daily caps; a call beyond one waits for a human.
       */
      per_user_day: z
        .strictObject({
          destructive: z.number().int().min(0).optional(),
          value: z.record(z.string().regex(/^[A-Z]{3}$/), z.number().int().min(0)).optional(),
        })
        .optional(),
    })
    .refine((users) => (users.jwks === undefined) !== (users.jwks_uri === undefined), {
      message: "give the provider's keys either inline (jwks) or as jwks_uri, exactly one of them",
      path: ["jwks"],
    });
export type UserIdentity = z.infer<ReturnType<typeof userIdentitySchema>>;
