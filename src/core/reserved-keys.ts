/**
 * Names that reach an object's prototype rather than its own fields when copied: `{"__proto__":
 * {...}}` would hand a validator inherited arguments that the digest and the key never saw. Every
 * body is refused holding one (machine/limit.ts), so no tool may name an argument so (catalog.ts).
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);
