// One OpenAPI operation to one draft tool declaration (the catalog format of catalog/schema.json).
// What a machine can read off the document is filled in; what only a human knows is proposed
// behind a draft marker (`side_effect: { draft, why }`, `TODO(review): ...`) that `check` refuses.
import { isToolName } from "../../src/catalog/catalog.ts";
import { credentialLikeField, inputFields } from "./catalog-credential-rules.ts";
import {
  describeInputFields,
  freeTextPaths,
  isObject,
  setField,
  toCatalogSchema,
} from "./openapi-schema.mjs";

export const REVIEW = "TODO(review):";
export const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
const CATALOG_METHODS = new Set(["get", "post", "put", "patch", "delete"]);
// Within the catalog rule by class (src/catalog/timeout-rules.ts): relaxed reads, strict keyed calls.
const TIMEOUT_MS = { read: 10_000, write: 8000, destructive: 8000 };

/** An idempotency-key header is the upstream's business (declared once), not a tool argument. */
const IDEMPOTENCY_HEADER = /^(x-)?idempotency[-_]?key$/i;

/**
 * `getShipmentAnswerByKey` → `get_shipment_answer_by_key`; runs of capitals stay one word
 * (`getHTTPStatus` → `get_http_status`), and separators become underscores.
 *
 * @param {string} operationId
 */
export function snakeCase(operationId) {
  return operationId
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toLowerCase();
}

/** The class a method suggests: a proposal only, since POST can as well search as pay. */
function proposedSideEffect(method) {
  if (method === "get") return "read";
  if (method === "delete") return "destructive";
  return "write";
}

/**
 * @typedef {{ location: string, message: string }} Problem
 * @typedef {{ path: string, method: string, operation: Record<string, any>, parameters: { parameter: Record<string, any>, location: string }[] }} Operation
 * @typedef {{ credential: import("./openapi-credentials.mjs").OperationCredential, report: (location: string, message: string) => void, idempotencyHeaders: Set<string>, budget: import("./openapi-schema.mjs").Budget }} Context
 *   `credential`: the operation's upstream and the parameters that are its credential, never inputs
 */

/**
 * The draft of one operation, or null when its request or answer cannot be expressed (every
 * reason reported, then the operation itself).
 *
 * @param {Operation} op
 * @param {Context} context
 * @returns {{ tool: Record<string, unknown>, review: string[] } | null}
 */
export function draftTool(op, context) {
  const { report } = context;
  const at = `paths.${op.path}.${op.method}`;
  const operationId = op.operation.operationId ?? `${op.method} ${op.path}`;
  const notDrafted = () => {
    report(at, `operation ${operationId} not drafted`);
    return null;
  };
  if (!CATALOG_METHODS.has(op.method)) {
    report(
      at,
      `the method ${op.method.toUpperCase()} is not supported; operation ${operationId} not drafted`,
    );
    return null;
  }
  const review = [];
  const name = toolNameOf(op, review);

  const input = { type: "object", properties: {}, required: [] };
  const request = { upstream: context.credential.binding, method: op.method.toUpperCase(), path: op.path };
  if (!addParameters(op, input, request, context, review)) return notDrafted();
  if (
    op.operation.requestBody &&
    !addBody(op.operation.requestBody, `${at}.requestBody`, input, request, report, context.budget)
  ) {
    return notDrafted();
  }
  if (op.operation.callbacks) report(`${at}.callbacks`, "callbacks are not supported; left out of the draft");
  /** @type {Map<string, string>} */
  const omitted = new Map();
  const output = outputOf(
    op.operation.responses ?? {},
    `${at}.responses`,
    report,
    review,
    context.budget,
    omitted,
  );
  if (!output) return notDrafted();
  if (input.required.length === 0) delete input.required;
  describeInputFields(input);
  const notCredentials = credentialMarkers(input);

  const sideEffect = proposedSideEffect(op.method);
  const does = [op.operation.description, op.operation.summary]
    .find((text) => typeof text === "string" && text.trim() !== "")
    ?.trim()
    .replace(/\s+/g, " ");
  const trustedText = Object.fromEntries(
    freeTextPaths(output).map((path) => [
      path,
      `${REVIEW} untrusted or trusted? If third parties can write it, move it to untrusted; else give the reason.`,
    ]),
  );
  const writes = sideEffect !== "read";
  const tool = {
    name,
    version: "1",
    title: op.operation.summary?.trim() || `${REVIEW} a short title`,
    side_effect: { draft: sideEffect, why: `proposed from the method ${op.method.toUpperCase()}` },
    description: {
      does: does ?? `${REVIEW} what the tool does, in one sentence`,
      use_when: `${REVIEW} when a model should call it, with an example call such as ${name}({...})`,
      avoid_when: `${REVIEW} when it should not, and which tool to use instead`,
      side_effects: writes
        ? `${REVIEW} what changes upstream, and what a repeat of the same call does`
        : `${REVIEW} proposed: None. Reads only.`,
    },
    timeout_ms: TIMEOUT_MS[sideEffect],
    input,
    ...(Object.keys(notCredentials).length > 0 ? { not_credentials: notCredentials } : {}),
    request,
    output: {
      schema: output,
      ...(Object.keys(trustedText).length > 0 ? { trusted_text: trustedText } : {}),
      ...(omitted.size > 0 ? { omitted: omittedMarkers(omitted) } : {}),
    },
  };
  review.push(
    "side_effect",
    "description",
    ...(Object.keys(notCredentials).length > 0
      ? [`not_credentials (${count(notCredentials, "field")})`]
      : []),
    ...(Object.keys(trustedText).length > 0 ? [`output.trusted_text (${count(trustedText, "field")})`] : []),
    ...(omitted.size > 0 ? [`output.omitted (${count(Object.fromEntries(omitted), "field")})`] : []),
  );
  if (writes) {
    tool.postcondition = `${REVIEW} which read tool reads the effect back and which fields must match, or no_postcondition: <why>`;
    tool.dry_run = `${REVIEW} what the sandbox binding simulates, and what only production reveals`;
    review.push("postcondition", "dry_run");
  }
  return { tool, review };
}

function count(record, noun) {
  const n = Object.keys(record).length;
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * An answer's parts the whitelist leaves out, each behind a marker: a reviewer writes the schema
 * that carries it, or says why the answer does without it.
 */
function omittedMarkers(omitted) {
  const markers = {};
  for (const [path, why] of omitted) {
    setField(
      markers,
      path,
      `${REVIEW} not carried (${why}): write its schema under output.schema if a model needs it, or say here why the answer does without it`,
    );
  }
  return markers;
}

/**
 * An input field still reading like a credential (a body's `password`) behind a marker: the
 * catalog sends credentials only from secrets, in a header or the query, so a reviewer says why
 * it is no credential, or removes it. Both importers draft these.
 *
 * @param {Record<string, unknown>} input
 * @returns {Record<string, string>}
 */
export function credentialMarkers(input) {
  const markers = {};
  for (const field of inputFields(input).filter(credentialLikeField)) {
    setField(
      markers,
      field.path,
      `${REVIEW} ${field.path} reads like a credential, and a model would fill it: say why it is not one, or remove the field (an API key is the upstream's credential, from a secret)`,
    );
  }
  return markers;
}

/** The verbs a method suggests, for a path that names one item and for one that names a collection. */
const VERBS = {
  get: ["get", "list"],
  post: ["create", "create"],
  put: ["update", "update"],
  patch: ["update", "update"],
  delete: ["delete", "delete"],
};

/** `postcodes` → `postcode`, `addresses` → `address`, `categories` → `category`; `status` stays. */
function singular(word) {
  if (/(ss|us|is)$/.test(word)) return word;
  if (/ies$/.test(word)) return word.replace(/ies$/, "y");
  if (/uses$/.test(word)) return word.replace(/es$/, "");
  if (/(x|ch|sh|ss)es$/.test(word)) return word.replace(/es$/, "");
  return word.replace(/s$/, "");
}

/**
 * A name from the method and path, verb first: `GET /postcodes/{id}` → `get_postcode`,
 * `GET /postcodes` → `list_postcodes`, `POST /postcodes` → `create_postcode`,
 * `GET /keys/{key}/details` → `list_key_details`.
 */
function derivedName(op) {
  const segments = op.path.split("/").filter((segment) => segment !== "");
  const item = segments.at(-1)?.startsWith("{") ?? false;
  const words = segments
    .filter((segment) => !segment.startsWith("{"))
    .map(snakeCase)
    .filter(Boolean);
  const [one, many] = VERBS[op.method] ?? [op.method, op.method];
  const verb = item ? one : many;
  const nouns = words.map((word, index) =>
    index === words.length - 1 && verb === "list" ? word : word.split("_").map(singular).join("_"),
  );
  return snakeCase([verb, ...nouns].join("_"));
}

/**
 * The tool's name: the operationId in snake_case when it is verb_noun as the catalog names tools,
 * else one from the method and path, listed for review (`postcodes` → `list_postcodes`).
 */
function toolNameOf(op, review) {
  const operationId = op.operation.operationId;
  const fromId = operationId ? snakeCase(operationId) : "";
  if (fromId && isToolName(fromId)) return fromId;
  const name = derivedName(op);
  const why = operationId ? `the operationId ${operationId} is no verb_noun tool name` : "no operationId";
  const fits = isToolName(name) ? "" : "; it is no verb_noun name either: choose one";
  review.push(`name: ${why}; named ${name} from the method and path${fits}`);
  return name;
}

/** The JSON pointer to a top-level argument, its name escaped (RFC 6901: `~` is `~0`, `/` is `~1`). */
function pointerTo(field) {
  return `/${field.replaceAll("~", "~0").replaceAll("/", "~1")}`;
}

/**
 * Path and query parameters become input fields (the query mapped back by pointer); the
 * idempotency header and the credential are the upstream's; other header and cookie parameters
 * cannot be sent by a declaration. An optional one it cannot send is left out; a required one
 * sinks the operation.
 */
function addParameters(op, input, request, context, review) {
  let ok = true;
  for (const { parameter, location } of op.parameters) {
    const where = `${location} (${parameter.in} ${parameter.name})`;
    const unsupported = (message) => {
      context.report(where, `${message}${parameter.required ? "" : "; left out of the draft"}`);
      if (parameter.required) ok = false;
    };
    if (parameter.in === "header" && IDEMPOTENCY_HEADER.test(parameter.name)) {
      context.idempotencyHeaders.add(parameter.name);
      continue;
    }
    if (context.credential.credentialParameters.has(parameter)) {
      review.push(
        `credential: ${parameter.in} ${parameter.name} is ${context.credential.binding}'s credential, not an input`,
      );
      continue;
    }
    if (parameter.in === "cookie") {
      unsupported("cookie parameters are not supported");
      continue;
    }
    if (parameter.in === "header") {
      unsupported("header parameters are not supported (a declaration sends only literal headers)");
      continue;
    }
    if (parameter.content) {
      unsupported("parameters serialised by content are not supported");
      continue;
    }
    // OpenAPI tells parameters apart by name and location; a declaration's inputs by name alone.
    if (Object.hasOwn(input.properties, parameter.name)) {
      unsupported(`another parameter is named ${parameter.name} too; not supported`);
      continue;
    }
    const schema = toCatalogSchema(
      parameter.schema ?? { type: "string" },
      "input",
      `${location}.schema`,
      context.report,
      { budget: context.budget },
    );
    if (!schema) {
      ok = parameter.required ? false : ok;
      continue;
    }
    if (parameter.in === "query" && (schema.type === "object" || schema.type === "array")) {
      unsupported(`${schema.type} query parameters are not supported`);
      continue;
    }
    if (typeof parameter.description === "string") schema.description = parameter.description;
    setField(input.properties, parameter.name, schema);
    if (parameter.in === "path" || parameter.required) input.required.push(parameter.name);
    if (parameter.in === "query")
      request.query = { ...request.query, [parameter.name]: { arg: pointerTo(parameter.name) } };
  }
  return ok;
}

const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * A JSON object body's fields become top-level input fields, and the request body maps each back
 * (`{arg: /field}`); any other JSON body is one `body` field. Non-JSON bodies are not supported.
 */
function addBody(requestBody, at, input, request, report, budget) {
  const types = Object.keys(requestBody.content ?? {});
  const json = types.find((type) => JSON_MEDIA.test(type));
  for (const type of types.filter((t) => t !== json)) {
    const what = type.startsWith("multipart/") ? "multipart bodies are" : `${type} bodies are`;
    report(`${at}.content.${type}`, `${what} not supported${json ? "; only the JSON body is drafted" : ""}`);
  }
  if (!json) return false;
  const schema = toCatalogSchema(requestBody.content[json].schema ?? {}, "input", at, report, { budget });
  if (!schema) return false;
  if (schema.type !== "object") {
    input.properties.body = { ...schema, description: schema.description ?? requestBody.description };
    if (requestBody.required) input.required.push("body");
    request.body = { arg: "/body" };
    return true;
  }
  request.body = {};
  for (const [field, fieldSchema] of Object.entries(schema.properties)) {
    if (Object.hasOwn(input.properties, field)) {
      report(
        `${at}.properties.${field}`,
        `the body field ${field} has the name of a parameter; not supported`,
      );
      return false;
    }
    setField(input.properties, field, fieldSchema);
    setField(request.body, field, { arg: pointerTo(field) });
  }
  input.required.push(...(schema.required ?? []));
  return true;
}

/**
 * The first 2xx answer's JSON schema: the output whitelist the draft starts from. The fields it
 * leaves out are collected in `omitted`, by path, with why.
 */
function outputOf(responses, at, report, review, budget, omitted) {
  const code = ["200", "201", "202", "2XX", ...Object.keys(responses)].find(
    (candidate) => /^2(\d\d|XX)$/.test(candidate) && candidate in responses,
  );
  if (!code) {
    report(at, "no 2xx response");
    return null;
  }
  const content = responses[code].content ?? {};
  const types = Object.keys(content);
  if (types.length === 0) {
    review.push(`output: the ${code} answer has no body; the draft keeps nothing of it`);
    return { type: "object", properties: {} };
  }
  const json = types.find((type) => JSON_MEDIA.test(type));
  if (!json) {
    report(`${at}.${code}.content`, `${types.join(", ")} answers are not supported; only JSON`);
    return null;
  }
  return toCatalogSchema(content[json].schema ?? {}, "output", `${at}.${code}`, report, { budget, omitted });
}

/** @returns {Operation[]} every operation of the document, path-level parameters merged in. */
export function operationsOf(document) {
  const operations = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!isObject(item)) continue;
    const shared = (item.parameters ?? []).map((parameter, index) => ({
      parameter,
      location: `paths.${path}.parameters[${index}]`,
    }));
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const own = (operation.parameters ?? []).map((parameter, index) => ({
        parameter,
        location: `paths.${path}.${method}.parameters[${index}]`,
      }));
      // An operation's parameter overrides a path-level one of the same name and place.
      const key = ({ parameter }) => `${parameter.in}:${parameter.name}`;
      const overridden = new Set(own.map(key));
      const parameters = [...shared.filter((p) => !overridden.has(key(p))), ...own];
      operations.push({ path, method, operation, parameters });
    }
  }
  return operations;
}
