// Reading an OpenAPI document for the importer: the file named and the JSON or YAML files under
// its own folder, nothing else, within the limits below. The document is the importer's input
// from anywhere (a vendor's spec, a colleague's branch): a `$ref` must not be a way to copy a
// local secret into a draft, and a small file must not be a way to exhaust the machine.
import { realpathSync } from "node:fs";
import { open, realpath } from "node:fs/promises";
import { dirname, extname, isAbsolute, relative, resolve, sep } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import YAML from "yaml";

/** Every limit of an import, in one place (docs/abuse-resistance.md, "Imports", states them). */
export const IMPORT_LIMITS = Object.freeze({
  /** Bytes of all the files a document is made of, together. */
  maxBytes: 8 * 1024 * 1024,
  /** The yaml package's `maxAliasCount`: aliases weighed by the nodes each one repeats. */
  maxYamlAliases: 100,
  /** Nodes (objects and arrays) the parser walks expanding `$ref`s: the document written out in full. */
  maxExpandedNodes: 1_000_000,
  /** Schema nodes one draft converts, across its operations (a recursive schema is a cycle to walk). */
  maxDraftedNodes: 100_000,
  /** Milliseconds to resolve and expand the `$ref`s. */
  maxDereferenceMs: 10_000,
});

/** The extensions a referenced file may have: a `$ref` reads a document, never another kind of file. */
const DOCUMENT_EXTENSIONS = [".json", ".yaml", ".yml"];

/** A refusal the command line prints as it is: a bad document, an unknown operation, a file in the way. */
export class ImportError extends Error {}

/**
 * The document at `file`, every `$ref` resolved within its folder, validated as OpenAPI. A `$ref`
 * that would read anything else, and a document past a limit, are refused by location.
 *
 * @param {string} file
 * @returns {Promise<Record<string, any>>}
 */
export async function readOpenApi(file) {
  const root = resolve(file);
  let tree;
  try {
    tree = realpathSync(dirname(root));
  } catch {
    throw new ImportError(`${file}: no such file`);
  }
  /** The reason each refused file was refused, by the URL the parser asked for. */
  const refused = new Map();
  const budget = { bytes: IMPORT_LIMITS.maxBytes };
  const options = {
    parse: { json: true, yaml: boundedYaml, text: false, binary: false },
    resolve: { file: false, http: false, confined: confinedResolver({ root, tree, budget, refused }) },
    dereference: { excludedPathMatcher: expansionMeter() },
    timeoutMs: IMPORT_LIMITS.maxDereferenceMs,
  };
  const parser = new SwaggerParser();
  try {
    // The file alone first, so a file that does not parse says why rather than what came of it.
    const api = await parser.parse(file, options);
    // Then every `$ref`, each problem kept with the place it was written.
    return await parser.validate(file, api, { ...options, continueOnError: true });
  } catch (error) {
    if (error instanceof ImportError) throw new ImportError(`${file}: ${error.message}`);
    throw new ImportError(describeFailure(file, error, refused));
  }
}

/**
 * A count of the nodes the parser walks while it expands `$ref`s, refused past the limit. Each
 * `$ref` becomes one shared object, but the walks over the result (the parser's own, the
 * validator's, the draft's) go through it once per path: 40 schemas each naming the previous
 * twice are 2^40 nodes. The parser asks `excludedPathMatcher` at every node it walks, so it is
 * the meter, and it never excludes anything.
 */
function expansionMeter() {
  let walked = 0;
  return () => {
    if (++walked > IMPORT_LIMITS.maxExpandedNodes) {
      throw new ImportError(
        `the document expands past ${IMPORT_LIMITS.maxExpandedNodes} nodes once its $refs are written out (the importer's limit); a schema that names another several times over, level after level, multiplies`,
      );
    }
    return false;
  };
}

/**
 * The only resolver: reads the document itself, and a JSON or YAML file under its folder (after
 * symbolic links), within the byte budget. Anything else is refused before it is opened.
 */
function confinedResolver({ root, tree, budget, refused }) {
  const refuse = (url, reason) => {
    refused.set(url, reason);
    throw new Error(reason);
  };
  return {
    order: 1,
    canRead: true,
    /** @param {{ url: string }} file */
    async read(file) {
      const { url } = file;
      if (/^https?:/i.test(url)) refuse(url, `${url} is remote; the importer reads no network`);
      if (/^[a-z][a-z0-9+.-]+:/i.test(url)) {
        refuse(url, `${url} is a URL; only files beside the document, by a relative path, are read`);
      }
      let path;
      try {
        path = decodeURIComponent(url);
      } catch {
        refuse(url, `${url} is not a file path`);
      }
      const named = resolve(path);
      const isRoot = named === root;
      if (!isRoot && !DOCUMENT_EXTENSIONS.includes(extname(named).toLowerCase())) {
        refuse(url, `${named} is not a JSON or YAML document (${DOCUMENT_EXTENSIONS.join(", ")})`);
      }
      let real;
      try {
        real = await realpath(named);
      } catch {
        refuse(url, `${named}: no such file`);
      }
      const inside = relative(tree, real);
      if (
        !isRoot &&
        (inside === "" || inside.startsWith(`..${sep}`) || inside === ".." || isAbsolute(inside))
      ) {
        refuse(
          url,
          `${named} is outside the document's folder ${tree}${real === named ? "" : ` (it links to ${real})`}; only files under it are read`,
        );
      }
      return readWithin(real, budget, (reason) => refuse(url, reason));
    },
  };
}

/** The file's bytes, refused before reading past what the budget leaves. */
async function readWithin(path, budget, refuse) {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    if (size > budget.bytes) {
      refuse(
        `${path} would take the document past ${IMPORT_LIMITS.maxBytes} bytes (the importer's limit for all its files together)`,
      );
    }
    budget.bytes -= size;
    const buffer = Buffer.alloc(size);
    await handle.read(buffer, 0, size, 0);
    return buffer;
  } finally {
    await handle.close();
  }
}

/** YAML (and JSON, which is YAML) through the yaml package, with its alias limit. */
const boundedYaml = {
  order: 200,
  allowEmpty: true,
  canParse: [".yaml", ".yml", ".json"],
  /** @param {{ data: unknown }} file */
  parse(file) {
    const text = Buffer.isBuffer(file.data) ? file.data.toString("utf8") : file.data;
    if (typeof text !== "string") return text;
    try {
      return YAML.parse(text, { maxAliasCount: IMPORT_LIMITS.maxYamlAliases, logLevel: "error" });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/alias count/i.test(message)) {
        throw new Error(
          `its YAML aliases repeat more than the importer expands (maxAliasCount ${IMPORT_LIMITS.maxYamlAliases}): a document that multiplies itself through aliases is refused`,
        );
      }
      throw error;
    }
  },
};

/** One line per problem, each at its file and JSON pointer; a refused file's reason, never its content. */
function describeFailure(file, error, refused) {
  const errors = Array.isArray(error?.errors) && error.errors.length > 0 ? error.errors : [error];
  const lines = errors.map((each) => {
    const where = locationOf(file, each);
    const reason = [...refused].find(([url]) => String(each?.message ?? "").includes(url))?.[1];
    if (reason) return `${where}: $ref refused: ${reason}`;
    if (each?.name === "TimeoutError") {
      return `${where}: resolving the $refs took longer than ${IMPORT_LIMITS.maxDereferenceMs} ms (the importer's limit)`;
    }
    return `${where}: not a valid OpenAPI document: ${each instanceof Error ? each.message : String(each)}`;
  });
  return lines.join("\n");
}

/** `doc.json#/paths/~1pets/get`: where a parser error lies, as a reader finds it. */
function locationOf(file, error) {
  const source = typeof error?.source === "string" && error.source !== "" ? error.source : resolve(file);
  const shown = relative(process.cwd(), source);
  const name = shown.startsWith("..") || isAbsolute(shown) ? source : shown;
  const path = Array.isArray(error?.path) ? error.path : null;
  return path ? `${name}#/${path.map((part) => escapePointer(String(part))).join("/")}` : name;
}

const escapePointer = (token) => token.replace(/~/g, "~0").replace(/\//g, "~1");
