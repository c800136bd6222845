import * as z from "zod";
import { SIDE_EFFECTS } from "../catalog/define-tool";

/** A tool's class of side effect (`read`, `draft`, `write`, `destructive`) as it appears in payloads. */
export const SideEffectSchema = z.enum(SIDE_EFFECTS);
