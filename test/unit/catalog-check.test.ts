import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkCatalog } from "../../scripts/tools/catalog-check";

const root = fileURLToPath(new URL("../..", import.meta.url));
const BAD = "test/unit/fixtures/catalog/bad";
const at = (file: string) => `${BAD}/${file}.yaml`;

describe("npm run tools -- check", () => {
  // One run over every bad file: the checker reports all problems of all files at once.
  const { problems, compiled } = checkCatalog(root, BAD);
  const expectProblem = (file: string, path: string, text: string) =>
    expect(problems).toContainEqual(
      expect.stringMatching(new RegExp(`^${at(file)}: ${escapeRegExp(path)}: .*${escapeRegExp(text)}`)),
    );

  it("refuses an unknown side-effect class and a missing one, each at its tool", () => {
    expectProblem("side_effects", "tools[1].side_effect", 'unknown side_effect "sometimes"');
    expectProblem("side_effects", "tools[2].side_effect", "side_effect is required");
  });

  it("refuses a path placeholder that is not an input field", () => {
    expectProblem("paths", "tools[1].request.path", "{shipment} is not an input field");
  });

  it("refuses an unclassified free-text output field, with the rule code tools pass", () => {
    expectProblem("trust", "tools[1].output", 'output field "carrier" is free text but not classified');
  });

  it("refuses a write without a postcondition or a reason, and one without its dry-run note", () => {
    expectProblem("postcondition", "tools[1].postcondition", "a write tool needs a postcondition");
    expectProblem("dry_run", "tools[1].dry_run", "says what a dry run cannot show");
  });

  it("refuses a policy naming an unknown input field or tenant setting", () => {
    expectProblem("policies", "tools[1].policies[0].owned_by_tenant", '"parcel_id" is not an input field');
    expectProblem(
      "policies",
      "tools[1].policies[1].max_from_setting.setting",
      'setting "max_parcels_per_day"',
    );
  });

  it("refuses an undeclared upstream and a secret the deploy template does not list", () => {
    expectProblem("upstreams", "tools[1].request.upstream", "BILLING_API is not a declared upstream");
    expectProblem("upstreams", "upstreams.SHIPMENTS_API.credential.secret", "UNLISTED_API_KEY is not listed");
  });

  it("refuses an upstream with no way to it in an environment, and production over plain http", () => {
    expectProblem(
      "upstreams",
      "upstreams.HALF_API",
      "no production base: give base.production (a URL), or bind HALF_API",
    );
    expect(problems.some((problem) => problem.includes("upstreams.HALF_API: no sandbox base"))).toBe(false);
    expectProblem("base", "upstreams.PLAIN_API.base.production", "production is reached over https");
  });

  it("refuses an eleventh tool; the built-in read_result_page does not count", () => {
    expectProblem("eleven", "tools[10].name", 'namespace "eleven" has more than 10 tools');
    expect(problems.filter((problem) => problem.startsWith(at("eleven")))).toHaveLength(1);
  });

  it("refuses the importer's draft markers until a human removes them", () => {
    expectProblem("draft", "tools[1].side_effect.draft", "a draft marker left by the importer");
    expectProblem("draft", "tools[1].description.does", "left for review by the importer");
  });

  it("refuses two tools of one name, and a name a code tool already has", () => {
    expectProblem("duplicates", "tools[1].name", '"read_duplicates" is already a tool');
    expectProblem("duplicates", "tools[2].name", '"lookup_order" is already a tool of the code tools');
  });

  it("reports the problems of every file at once and compiles nothing", () => {
    const files = new Set(problems.map((problem) => problem.split(":")[0]));
    expect(files.size).toBe(11);
    expect(compiled).toEqual([]);
  });

  it("passes the shipped catalog and compiles every namespace of it", () => {
    const shipped = checkCatalog(root);
    expect(shipped.problems).toEqual([]);
    expect(shipped.compiled.map((file) => file.namespace)).toContain("shipping");
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
