import * as z from "zod";
import { signToken, verifyToken } from "../auth/signed-token";

/**
 * The per-run, per-tool credential the proxy presents to an upstream. The agent never sees it,
 * nor the secret that signs it; it expires with the run, so a leaked one is worth one run at most.
 */
export const UpstreamCredentialSchema = z.object({
  tenant: z.string(),
  run: z.string(),
  tool: z.string(),
  exp: z.number(),
});
export type UpstreamCredential = z.infer<typeof UpstreamCredentialSchema>;

const PREFIX = "uc1";

export function issueUpstreamCredential(
  claims: UpstreamCredential,
  secrets: readonly string[],
): Promise<string> {
  return signToken(PREFIX, claims, secrets);
}

export function verifyUpstreamCredential(token: string, secrets: readonly string[], now?: number) {
  return verifyToken(
    PREFIX,
    token,
    secrets,
    (value) => {
      const parsed = UpstreamCredentialSchema.safeParse(value);
      return parsed.success ? parsed.data : null;
    },
    now,
  );
}
