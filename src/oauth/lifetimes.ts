/**
 * How long what an OAuth grant hands out lasts: the provider is configured with these, and the
 * consent page tells the operator, so what they allow is bounded in time as well as in tools.
 */

/** An hour: a leaked access token is soon worthless, and clients refresh rarely. Revocation is immediate anyway. */
export const ACCESS_TOKEN_TTL_S = 60 * 60;
/** A grant lives 30 days after its code exchange however often it is refreshed; then an operator consents again. */
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 60 * 60;
