import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root, whichever folder the script was started from. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
