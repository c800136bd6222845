const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Stripe-style opaque ids (`re_…`, `tk_…`, `em_…`): unguessable, so tests cannot hard-code them. */
export function newId(prefix: "re" | "tk" | "em" | "dr" | "nt"): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let id = "";
  // 62 does not divide 256, so a slight bias remains; irrelevant for ids that only need uniqueness.
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${id}`;
}

export function nowIso(): string {
  return new Date().toISOString();
}
