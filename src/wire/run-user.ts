import * as z from "zod";
import { lazily } from "../core/lazily";

/**
 * The person a run acts for, as the tenant's identity provider asserted it when the run was opened
 * (a verified JWT, never anything a model sent): its subject and issuer, its display name when the
 * assertion had one, and the assertion's other scalar claims, which policies may compare with
 * arguments (`user.refund_limit_cents`).
 */
export const runUserSchema = lazily(() =>
  z.strictObject({
    sub: z.string().describe("The user's subject at the tenant's identity provider."),
    iss: z.string().describe("The identity provider that asserted the user."),
    name: z.string().nullable().describe("The user's display name, when the assertion carried one."),
    claims: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .describe("The assertion's other scalar claims, as policies read them."),
  }),
);
export type RunUser = z.infer<ReturnType<typeof runUserSchema>>;

/**
 * Whom an approval's call acts for, as operators are shown it: the run's user without their claims
 * (a refund limit is the provider's business, not every approver's).
 */
export const approvalUserSchema = lazily(() =>
  z.strictObject({
    sub: z.string().describe("The user's subject at the tenant's identity provider."),
    iss: z.string().describe("The identity provider that asserted the user."),
    name: z.string().nullable().describe("The user's display name, when the assertion carried one."),
  }),
);
export type ApprovalUser = z.infer<ReturnType<typeof approvalUserSchema>>;
