import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { checkCatalog } from "../../scripts/tools/catalog-check";
import { importOpenApi, runImportOpenApi } from "../../scripts/tools/import-openapi.mjs";

/**
 * A hostile OpenAPI document: the importer reads only the document and the JSON or YAML files
 * under its folder, never a secret beside it, and a document that multiplies itself is refused
 * in words that name the limit, instead of running until the machine gives out.
 */

const repository = fileURLToPath(new URL("../..", import.meta.url));
const SECRET = "SECRET_SIGNING_KEY=never-in-a-draft-5f1c";
let dir: string;
let docs: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "import-hostile-"));
  docs = join(dir, "api");
  mkdirSync(join(docs, "shared"), { recursive: true });
  writeFileSync(join(dir, ".dev.vars"), `${SECRET}\n`);
  writeFileSync(join(dir, "secret.json"), JSON.stringify({ description: SECRET }));
  writeFileSync(join(docs, "shared", "ok.json"), JSON.stringify({ text: "Lists the widgets." }));
  symlinkSync(join(dir, "secret.json"), join(docs, "shared", "linked.json"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A one-operation document whose operation description is `description`, written as `name`. */
function documentWith(name: string, description: unknown, extra: Record<string, unknown> = {}): string {
  const path = join(docs, name);
  writeFileSync(
    path,
    JSON.stringify({
      openapi: "3.0.3",
      info: { title: "Widgets", version: "1" },
      paths: {
        "/widgets": {
          get: {
            operationId: "listWidgets",
            description,
            responses: {
              "200": {
                description: "ok",
                content: {
                  "application/json": {
                    schema: { type: "object", properties: { name: { type: "string" } } },
                  },
                },
              },
            },
          },
        },
      },
      ...extra,
    }),
  );
  return path;
}

/** The refusal `importOpenApi` throws for `file`. */
async function refusal(file: string): Promise<string> {
  const error = await importOpenApi(file, { namespace: "widgets" }).then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(Error);
  const message = (error as Error).message;
  expect(message).not.toContain("never-in-a-draft");
  return message;
}

describe("a $ref reads only JSON or YAML files under the document's folder", () => {
  it("follows a relative $ref to a file under the folder", async () => {
    const file = documentWith("fine.json", { $ref: "shared/ok.json#/text" });
    const draft = await importOpenApi(file, { namespace: "widgets" });
    expect(draft.text).toContain("Lists the widgets.");
  });

  it.each([
    ["an absolute path", () => join(dir, ".dev.vars"), "is not a JSON or YAML document"],
    [
      "an absolute path to JSON",
      () => join(dir, "secret.json#/description"),
      "is outside the document's folder",
    ],
    ["a ../ path", () => "../secret.json#/description", "is outside the document's folder"],
    ["a ../ path to .dev.vars", () => "../.dev.vars", "is not a JSON or YAML document"],
    ["a file: URL", () => `file://${join(dir, "secret.json")}#/description`, "is a URL"],
    [
      "a remote URL",
      () => "http://127.0.0.1:9/secret.json#/description",
      "is remote; the importer reads no network",
    ],
    ["a symbolic link out of the folder", () => "shared/linked.json#/description", "links to"],
  ])("refuses %s, at the $ref's file and pointer, without reading it", async (_kind, ref, reason) => {
    const file = documentWith("hostile.json", { $ref: ref() });
    const message = await refusal(file);
    expect(message).toContain("hostile.json#/paths/~1widgets/get/description: $ref refused: ");
    expect(message).toContain(reason);
  });

  it("prints the refusal on the command line and writes no draft", async () => {
    const output: string[] = [];
    const capture = (...parts: unknown[]) => void output.push(parts.join(" "));
    vi.spyOn(console, "log").mockImplementation(capture);
    vi.spyOn(console, "error").mockImplementation(capture);
    try {
      const file = documentWith("cli.json", { $ref: "../.dev.vars" });
      const catalog = join(dir, "catalog");
      expect(
        await runImportOpenApi(["openapi", file, "--namespace", "widgets", "--catalog-dir", catalog]),
      ).toBe(1);
      expect(output.join("\n")).toContain("$ref refused");
      expect(output.join("\n")).not.toContain("never-in-a-draft");
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe("a document that multiplies itself is refused, naming the limit", () => {
  it("refuses a YAML alias bomb", async () => {
    const lines = [
      'openapi: "3.0.3"',
      "info: { title: lol, version: '1' }",
      "paths: {}",
      'x-a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    ];
    let previous = "a";
    for (const name of "bcdefghi") {
      lines.push(`x-${name}: &${name} [${Array(9).fill(`*${previous}`).join(", ")}]`);
      previous = name;
    }
    const file = join(docs, "lol.yaml");
    writeFileSync(file, `${lines.join("\n")}\n`);
    expect(await refusal(file)).toContain("maxAliasCount 100");
  });

  it("refuses 40 schemas that each name the previous one twice", async () => {
    const schemas: Record<string, unknown> = { S0: { type: "string" } };
    for (let i = 1; i <= 40; i++) {
      const previous = { $ref: `#/components/schemas/S${i - 1}` };
      schemas[`S${i}`] = { type: "object", properties: { a: previous, b: { ...previous } } };
    }
    const file = documentWith("doubling.json", "Doubles.", { components: { schemas } });
    expect(await refusal(file)).toContain(
      "expands past 1000000 nodes once its $refs are written out (the importer's limit)",
    );
  });

  it("refuses recursive schemas that name each other densely", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `K${i}`);
    const schemas = Object.fromEntries(
      names.map((name) => [
        name,
        {
          type: "object",
          properties: Object.fromEntries(
            names
              .filter((other) => other !== name)
              .map((other) => [other, { $ref: `#/components/schemas/${other}` }]),
          ),
        },
      ]),
    );
    const file = documentWith("dense.json", "Dense.", { components: { schemas } });
    const body = { content: { "application/json": { schema: { $ref: "#/components/schemas/K0" } } } };
    const document = JSON.parse(readFileSync(file, "utf8"));
    document.paths["/widgets"].get.responses["200"] = { description: "ok", ...body };
    writeFileSync(file, JSON.stringify(document));
    expect(await refusal(file)).toMatch(/more than 100000 nodes once drafted \(the importer's limit/);
  });

  it("refuses a document past the byte limit before reading it", async () => {
    const file = join(docs, "huge.json");
    writeFileSync(file, "");
    truncateSync(file, 9 * 1024 * 1024);
    expect(await refusal(file)).toContain("past 8388608 bytes (the importer's limit");
  });
});

describe("a server no public upstream has becomes a draft marker, never a base", () => {
  const own = { hosts: ["edge-tool-proxy.*.workers.dev"], localPort: "8787" };
  const baseOf = async (url: string, description = "") => {
    const file = documentWith("servers.json", "Lists.", { servers: [{ url, description }] });
    const draft = await importOpenApi(file, { namespace: "widgets", own });
    return (draft.declaration.upstreams.WIDGETS_API as { base?: Record<string, string> }).base ?? {};
  };

  it.each([
    ["https://169.254.169.254/latest", "production", "link-local address"],
    ["https://metadata.google.internal/computeMetadata/v1", "production", "link-local address"],
    ["https://10.0.0.7/v1", "production", "private network"],
    ["https://192.168.1.20", "production", "private network"],
    ["https://[fd00::1]/v1", "production", "private network"],
    ["https://0.0.0.0/v1", "production", "unspecified address"],
    ["https://2130706433/v1", "production", "written to hide which it is"],
    ["https://0x7f.1/v1", "production", "written to hide which it is"],
    ["https://[::ffff:127.0.0.1]/v1", "production", "written to hide which it is"],
    ["https://[::1]/v1", "production", "loopback address"],
    // "dev" in workers.dev reads as a development server: the sandbox's.
    ["https://edge-tool-proxy.acme.workers.dev/v1", "sandbox", "this proxy's own address"],
    ["http://127.0.0.1:8787", "sandbox", "this proxy's own address"],
    ["http://localhost:8787/v1", "sandbox", "this proxy's own address"],
  ])("%s is marked for review as base.%s", async (url, environment, reason) => {
    const base = await baseOf(url);
    expect(base[environment]).toMatch(/^TODO\(review\): servers\[0\] /);
    expect(base[environment]).toContain(reason);
  });

  it("still proposes a public production server and a loopback sandbox server as they are", async () => {
    expect(await baseOf("https://api.widgets.com/v1")).toEqual({ production: "https://api.widgets.com/v1" });
    expect(await baseOf("http://127.0.0.1:8795/v1", "Sandbox")).toEqual({
      sandbox: "http://127.0.0.1:8795/v1",
    });
  });

  it("check refuses the draft at the marked base", async () => {
    const file = documentWith("metadata.json", "Lists.", {
      servers: [{ url: "https://169.254.169.254/latest" }],
    });
    const draft = await importOpenApi(file, { namespace: "widgets", own });
    const catalog = join(dir, "check-catalog");
    mkdirSync(catalog, { recursive: true });
    writeFileSync(join(catalog, "widgets.yaml"), draft.text);
    const { problems } = checkCatalog(repository, catalog);
    expect(problems).toContainEqual(
      expect.stringMatching(
        /check-catalog\/widgets\.yaml: upstreams\.WIDGETS_API\.base\.production: left for review by the importer: "TODO\(review\): servers\[0\] \(https:\/\/169\.254\.169\.254\/latest\) is a link-local address/,
      ),
    );
  });
});
