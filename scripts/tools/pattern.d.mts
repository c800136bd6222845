/** Types of scripts/tools/pattern.mjs. */
export function patternRegExp(pattern: string): RegExp | null;
