import { updateAtPath } from "./paths";

/** How a sensitive field is shown to a model, an operator and the trace. */
export type MaskRule = "email" | "phone" | "card" | "address" | "name" | "secret";

function maskString(rule: Exclude<MaskRule, "address">, text: string): string {
  switch (rule) {
    case "email": {
      const at = text.lastIndexOf("@");
      return at > 0 ? `${text.charAt(0)}***${text.slice(at)}` : "***";
    }
    case "phone": {
      const digits = text.replace(/\D/g, "");
      return digits.length >= 4 ? `***-***-${digits.slice(-4)}` : "***";
    }
    case "card": {
      const digits = text.replace(/\D/g, "");
      return digits.length >= 4 ? `**** **** **** ${digits.slice(-4)}` : "****";
    }
    case "name":
      return text
        .split(/\s+/)
        .filter(Boolean)
        .map((part) => `${part.charAt(0)}***`)
        .join(" ");
    case "secret":
      return "[redacted]";
  }
}

/**
 * Masks one value by its rule. Addresses keep city and country (enough to reason about shipping)
 * and lose the street and postal code; anything unexpected is redacted whole rather than leaked.
 */
export function maskValue(rule: MaskRule, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (rule === "address") {
    if (typeof value !== "object" || Array.isArray(value)) return "[redacted]";
    const masked: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
      masked[key] = key === "city" || key === "country" ? field : "***";
    }
    return masked;
  }
  return typeof value === "string" ? maskString(rule, value) : "[redacted]";
}

/** Applies every rule of a tool (path → rule) to a result or to arguments. */
export function applyMasks(value: unknown, rules: Readonly<Record<string, MaskRule>>): unknown {
  let out = value;
  for (const [path, rule] of Object.entries(rules))
    out = updateAtPath(out, path, (leaf) => maskValue(rule, leaf));
  return out;
}
