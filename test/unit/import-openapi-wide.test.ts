import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { importOpenApi } from "../../scripts/tools/import-openapi.mjs";

/**
 * A whole API in one namespace: the importer drafts every operation of a document with more of them
 * than a run lists at once, proposing which ones a run lists (a default set behind a draft marker),
 * and refuses a document past the bound on a namespace, naming --operations.
 */

const dir = mkdtempSync(join(tmpdir(), "wide-openapi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A document of `count` reads, `GET /things{n}/{id}`, each with its operationId. */
function documentOf(count: number): string {
  const paths = Object.fromEntries(
    Array.from({ length: count }, (_, index) => [
      `/things${index}/{id}`,
      {
        get: {
          operationId: `getThing${index}`,
          summary: `Read a thing of kind ${index}`,
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
          responses: {
            "200": {
              description: "The thing.",
              content: {
                "application/json": {
                  schema: { type: "object", properties: { id: { type: "string", format: "uuid" } } },
                },
              },
            },
          },
        },
      },
    ]),
  );
  const file = join(dir, `things-${count}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      openapi: "3.0.3",
      info: { title: "Things", version: "1" },
      servers: [{ url: "https://things.example.com" }],
      paths,
    }),
  );
  return file;
}

describe("import openapi of a whole API", () => {
  it("drafts all fourteen operations and proposes the ten a run lists, for review", async () => {
    const draft = await importOpenApi(documentOf(14), { namespace: "things" });
    expect(draft.tools).toHaveLength(14);
    expect(draft.declaration.default_tools?.draft).toEqual(
      Array.from({ length: 10 }, (_, index) => `get_thing${index}`),
    );
    expect(draft.declaration.default_tools?.why).toMatch(/finds the other 4 with find_tools/);
    expect(draft.notes).toContain(
      "default_tools: 14 tools drafted, more than a run lists at once (10); choose the ones most tasks need",
    );
    // Written before the tools, where a reader of the file meets it first.
    expect(draft.text.indexOf("default_tools:")).toBeLessThan(draft.text.indexOf("\ntools:"));
  });

  it("proposes no default set when a run can list every tool", async () => {
    const draft = await importOpenApi(documentOf(10), { namespace: "things" });
    expect(draft.declaration.default_tools).toBeUndefined();
  });

  it("refuses more operations than a namespace holds, naming --operations", async () => {
    await expect(importOpenApi(documentOf(201), { namespace: "things" })).rejects.toThrow(
      /201 tools; a namespace holds at most 200: choose with --operations a,b/,
    );
  });
});
