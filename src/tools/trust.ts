/**
 * Reasons for the support namespace's `trusted_text` declarations: free-text output fields that
 * cannot carry an outsider's words. Everything an outsider can write (order notes, customer
 * messages, policy documents) is `untrusted` instead; see `trusted_text` in define-tool.ts.
 */
export const ISSUED_ID = "an id the upstream system assigns; no customer or outsider chooses it";
export const TIMESTAMP = "a timestamp the upstream system writes";
export const STATUS_CODE = "a status or code word from the upstream system's fixed vocabulary";
export const CURRENCY = "an ISO currency code set by the shop";
export const PRODUCT = "a SKU or product name from the merchant's own catalog";
export const ECHO = "the upstream's echo of the agent's own argument, which passed the input schema";
export const TEMPLATE_TEXT = "rendered from the company's own email template and the agent's own notes";
