import * as z from "zod";

/** The four classes of side effect, from none to irreversible; the catalog refuses a tool without one. */
export const SIDE_EFFECTS = ["read", "draft", "write", "destructive"] as const;

/** A tool's class of side effect (`read`, `draft`, `write`, `destructive`) as it appears in payloads. */
export const SideEffectSchema = z.enum(SIDE_EFFECTS);
