import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkCatalog } from "../../scripts/tools/catalog-check";
import { isCredentialName, looksLikeCredential } from "../../scripts/tools/credential-names";

/**
 * Credentials are never model inputs: `check` refuses an input field that reads like a credential
 * (by its name, as words, or its description) unless the tool says why it is not one, and a
 * credential written into a request's literal headers or query.
 */

const root = fileURLToPath(new URL("../..", import.meta.url));
const DIR = "test/unit/fixtures/catalog/credentials";
const { problems } = checkCatalog(root, DIR);
const problemsOf = (file: string) =>
  problems.filter((problem) => problem.startsWith(`${DIR}/${file}.yaml: `));
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const expectProblem = (file: string, path: string, text: string) =>
  expect(problemsOf(file)).toContainEqual(
    expect.stringMatching(
      new RegExp(`^${escapeRegExp(`${DIR}/${file}.yaml: ${path}: `)}.*${escapeRegExp(text)}`),
    ),
  );

describe("a name read as words", () => {
  it.each([
    "api_key",
    "apiKey",
    "apikey",
    "X-API-Key",
    "user_token",
    "access_token",
    "Authorization",
    "password",
    "client_secret",
    "signature",
    "session_id",
    "sessionId",
    "auth",
    "x-auth-token",
    "credentials",
    "privateKey",
  ])("%s names a secret", (name) => {
    expect(isCredentialName(name)).toBe(true);
  });

  it.each([
    "order_id",
    "monkey",
    "keyword",
    "keys",
    "token_count",
    "max_tokens",
    "page_token",
    "pageToken",
    "nextPageToken",
    "idempotency_key",
    "Idempotency-Key",
    "public_key",
    "key_id",
    "api_key_name",
    "author",
    "sort_key",
    "auth_type",
    "session_count",
    "passenger",
    "tokenizer",
  ])("%s does not", (name) => {
    expect(isCredentialName(name)).toBe(false);
  });

  it("reads a description for what it says, not for a lone key or token", () => {
    expect(looksLikeCredential("user", "a secret key")).toBe(true);
    expect(looksLikeCredential("x", "The API key of your account.")).toBe(true);
    expect(looksLikeCredential("x", "Your access token.")).toBe(true);
    expect(looksLikeCredential("order", "The order's key in the register.")).toBe(false);
    expect(looksLikeCredential("cursor", "The token where the previous page ended.")).toBe(false);
  });
});

describe("npm run tools -- check, on credentials as inputs", () => {
  it("refuses an input field named or described as a credential, at any depth, at its field", () => {
    expectProblem(
      "refused",
      "tools[0].input.properties.api_key",
      'input field "api_key" looks like a credential',
    );
    expectProblem(
      "refused",
      "tools[0].input.properties.userToken",
      "Declare the upstream's credential (static_header or static_query, from a Workers secret) and remove the field; or, if it is no credential, say why under not_credentials.userToken",
    );
    expectProblem(
      "refused",
      "tools[0].input.properties.account.properties.code",
      'input field "account.code" looks like a credential',
    );
    expect(problemsOf("refused").some((problem) => problem.includes("properties.postcode"))).toBe(false);
    expect(problemsOf("refused").some((problem) => problem.includes("account.properties.login"))).toBe(false);
  });

  it("refuses a credential written into a request's literal headers or query", () => {
    expectProblem(
      "refused",
      "tools[0].request.headers.Authorization",
      "Authorization looks like a credential written into the catalog",
    );
    expectProblem("refused", "tools[0].request.query.signature", "signature looks like a credential");
    expect(problemsOf("refused").some((problem) => problem.includes("X-Api-Version"))).toBe(false);
  });

  it("accepts a field the tool says is no credential, and refuses a reason that says nothing or names no field", () => {
    expect(problemsOf("refused").some((problem) => problem.includes("properties.session"))).toBe(false);
    expectProblem("refused", "tools[1].not_credentials.street_key", '"street_key" is not an input field');
    expectProblem("refused", "tools[2].not_credentials.api_key", "give the reason, in a sentence");
  });

  it("asks a deploy for a query parameter's secret as for a header's", () => {
    expectProblem(
      "refused",
      "upstreams.LOOKUP_API.credential.secret",
      "secret UNLISTED_QUERY_KEY is not listed in secrets.production.example.json",
    );
  });

  it("refuses no name that only contains a secret word, nor a flag", () => {
    expect(problemsOf("accepted")).toEqual([]);
  });
});
