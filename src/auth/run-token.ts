import { z } from "zod";
import { signToken, verifyToken } from "./signed-token";

/** What a run token lets its holder do: call tools of one namespace in one run of one tenant. */
export const RunTokenClaimsSchema = z.object({
  tenant: z.string(),
  run: z.string(),
  ns: z.string(),
  exp: z.number(),
});
export type RunTokenClaims = z.infer<typeof RunTokenClaimsSchema>;

const PREFIX = "rt1";

export function issueRunToken(claims: RunTokenClaims, keys: readonly string[]): Promise<string> {
  return signToken(PREFIX, claims, keys);
}

export function verifyRunToken(token: string, keys: readonly string[], now?: number) {
  return verifyToken(
    PREFIX,
    token,
    keys,
    (value) => {
      const parsed = RunTokenClaimsSchema.safeParse(value);
      return parsed.success ? parsed.data : null;
    },
    now,
  );
}
