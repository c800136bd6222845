/** Types of scripts/tools/schema-rules.mjs. */
export function patternRegExp(pattern: string): RegExp | null;
export function isLiteralValue(value: unknown): boolean;
export function undeclaredRequired(schema: Record<string, unknown>): unknown[];
