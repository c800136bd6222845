import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { watchCatalog } from "../../scripts/catalog-watch.mjs";

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("npm start's catalog watch", () => {
  it("calls back once for a burst of writes to a declaration, and not for other files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "catalog-"));
    let changes = 0;
    const stop = watchCatalog(dir, () => changes++, 50);
    try {
      writeFileSync(join(dir, "notes.txt"), "not a declaration");
      await settle(150);
      expect(changes).toBe(0);
      for (let i = 0; i < 3; i++) writeFileSync(join(dir, "billing.yaml"), `format: 1 # ${i}`);
      // The file system's events come when they come on a busy machine: wait for the callback itself,
      // then for twice the quiet time, in which a second callback for the same burst would come.
      await expect.poll(() => changes, { timeout: 5_000, interval: 20 }).toBeGreaterThan(0);
      await settle(100);
      expect(changes).toBe(1);
    } finally {
      stop();
    }
  });
});
