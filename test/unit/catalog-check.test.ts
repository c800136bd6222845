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

  it("refuses a path placeholder whose input field is optional", () => {
    expectProblem(
      "paths",
      "tools[2].request.path",
      "{order_id} must be a required input field: left out, it would leave its path segment empty",
    );
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

  it("refuses a policy naming a claim form it does not know, at the claim", () => {
    expectProblem(
      "user_claims",
      "tools[1].policies[0].within_user_claim.at_most",
      'names a claim form this catalog does not know: write "user.<claim>"',
    );
  });

  it("refuses a deprecation whose replacement is not a tool, whose sunset is not after it, or whose date is none", () => {
    expectProblem(
      "deprecated",
      "tools[1].deprecated",
      'use_instead names "read_parcel_v2", which is not a tool of the catalog',
    );
    expectProblem(
      "deprecated",
      "tools[2].deprecated",
      "deprecated.sunset (2026-03-01) must come after deprecated.since (2026-09-01)",
    );
    expectProblem("deprecated", "tools[3].deprecated.since", "since must be an ISO 8601 day or date-time");
  });

  it("refuses a write through an upstream that leaves undecided whether it honours keys", () => {
    expectProblem(
      "idempotency",
      "upstreams.UNDECIDED_API.idempotency",
      "undecided, yet pay_out writes through it",
    );
    // An upstream of reads only may leave it undecided: nothing rests on it.
    expect(problems.some((problem) => problem.includes("upstreams.HONOURING_API.idempotency"))).toBe(false);
  });

  it("refuses the old idempotency_header, a retention of zero, and a settle or certify that cannot work", () => {
    expectProblem("idempotency_fields", "upstreams.OLD_API.idempotency_header", "moved: write idempotency:");
    expectProblem(
      "idempotency_fields",
      "upstreams.FORGETFUL_API.idempotency.retention_s",
      "at least 1 second",
    );
    expectProblem("idempotency_fields", "upstreams.UNSURE_API.idempotency.honoured", "true or false");
    expectProblem("idempotency", "tools[2].settle", "HONOURING_API honours keys");
    expectProblem(
      "idempotency",
      "tools[2].settle.tool",
      "pay_out is a write tool; a settling read must be a read",
    );
    expectProblem("idempotency", "tools[2].settle.args.order_id", "/order names no input field");
    expectProblem(
      "idempotency",
      "tools[2].certify.args.order_id",
      "not a valid argument of pay_out_settled_needlessly",
    );
    expect(problems.some((problem) => problem.includes("idempotency.yaml: tools[3].certify"))).toBe(false);
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

  it("asks a namespace of an eleventh tool which ones a run lists; the built-in read_result_page does not count", () => {
    expectProblem(
      "eleven",
      "default_tools",
      'namespace "eleven" has 11 tools, more than a run lists at once (10): declare default_tools',
    );
    expect(problems.filter((problem) => problem.startsWith(at("eleven")))).toHaveLength(1);
  });

  it("refuses a default set naming a tool the namespace lacks, or one twice; a valid entry is enough", () => {
    expectProblem("listed", "default_tools[1]", '"read_nope" is not a tool of this namespace');
    expectProblem("listed", "default_tools[2]", 'names "read_listed_one" twice');
    // read_listed_one is a default set: the twelve tools are not refused for lacking one.
    expect(problems.filter((problem) => problem.startsWith(at("listed")))).toHaveLength(2);
  });

  it("refuses a default set of more tools than a run lists at once", () => {
    expectProblem("crowded", "default_tools", "at most 10: a run lists no more at once");
  });

  it("refuses the importer's draft markers until a human removes them", () => {
    expectProblem("draft", "tools[1].side_effect.draft", "a draft marker left by the importer");
    expectProblem("draft", "tools[1].description.does", "left for review by the importer");
  });

  it("refuses two tools of one name, and the name of a built-in tool", () => {
    expectProblem("duplicates", "tools[1].name", '"read_duplicates" is already a tool');
    expectProblem(
      "duplicates",
      "tools[2].name",
      '"read_result_page" is already a tool of the built-in tools',
    );
  });

  it("refuses a policy text naming a value its rule does not offer, and an unknown setting to waive below", () => {
    expectProblem("references", "tools[1].policies[0].max_from_setting.hint", "{maximum} names nothing");
    expectProblem("references", "tools[1].policies[1].waive_approval_below.reason", "{value} names nothing");
    expectProblem(
      "references",
      "tools[1].policies[1].waive_approval_below.setting",
      'setting "no_such_threshold"',
    );
  });

  it("refuses a postcondition that expects a list where there is none, or fields the read lacks", () => {
    expectProblem(
      "references",
      "tools[1].postcondition.expect.status.contains",
      '"status" of read_references\'s output is not a list',
    );
    expectProblem(
      "references",
      "tools[1].postcondition.expect.events.contains.parcel_id",
      '"events.parcel_id" is not a field of read_references\'s output',
    );
    expectProblem(
      "references",
      "tools[1].postcondition.expect.events.contains.parcel_id",
      "/parcel_id names no field of this tool's output",
    );
  });

  it("refuses a check or a decision read filled from an optional field, which could name another resource", () => {
    const why = "without it, the check would read another resource";
    expectProblem(
      "references",
      "tools[1].postcondition.args.event_id",
      `/event_id must be a required field of this tool's output: ${why}`,
    );
    expectProblem(
      "references",
      "tools[1].postcondition.args.note",
      `/note must be a required field of this tool's input: ${why}`,
    );
    expectProblem(
      "references",
      "tools[1].decision_context.args.note",
      "/note must be a required field of this tool's input: without it, the read would name another resource",
    );
  });

  it("refuses a postcondition message naming an argument or result field that does not exist", () => {
    expectProblem("references", "tools[1].postcondition.on_missing.message", "{result.parcel} names nothing");
    expectProblem(
      "references",
      "tools[1].postcondition.on_mismatch.message",
      "{args.customer} names nothing",
    );
  });

  it("refuses decision facts reading fields the read lacks, money without a currency, and a warning's unknown value", () => {
    const facts = "tools[1].decision_context.facts";
    expectProblem(
      "references",
      `${facts}[0].path`,
      '"destination" is not a field of read_references\'s output',
    );
    expectProblem("references", `${facts}[1].format`, "a money fact needs decision_context.money");
    expectProblem("references", `${facts}[2].list.sum`, '"events.weight" is not a field');
    expectProblem("references", `${facts}[3].warning.above`, '"ceiling" is not a field');
    expectProblem(
      "references",
      `${facts}[3].warning.text`,
      "{limit} names nothing this text is given; it may use {bound}",
    );
  });

  it("refuses an unknown field of a postcondition's verdict and a currency that is not an ISO code", () => {
    expectProblem("vocabulary", "tools[1].postcondition.on_mismatch", 'Unrecognized key: "code"');
    expectProblem("vocabulary", "tools[1].decision_context.money.default_currency", "an ISO 4217 code");
  });

  it("refuses a remote tool whose pin is not the digest of its reviewed definition", () => {
    expectProblem(
      "remote",
      "tools[0].request.pin",
      `pin does not match the reviewed definition in ${BAD}/remote.pins.json; run npm run tools -- pin remote`,
    );
  });

  it("refuses a remote tool declaring an input field the server's reviewed schema does not take", () => {
    expectProblem(
      "remote",
      "tools[1].input.properties.priority",
      `the server's get_ticket takes no field "priority"`,
    );
  });

  it("refuses a remote tool without a reviewed definition, or a namespace without a pins file", () => {
    expectProblem("remote", "tools[2].request.tool", "holds no reviewed definition of find_ticket");
    expectProblem(
      "unpinned",
      "tools[0].request.pin",
      `no reviewed definitions: ${BAD}/unpinned.pins.json is missing`,
    );
    expect(problems.filter((problem) => problem.startsWith(at("remote")))).toHaveLength(3);
  });

  it("refuses an HTTP upstream that sends no credential", () => {
    expectProblem(
      "credential_none",
      "upstreams.PLAIN_API.credential.kind",
      "none is for an MCP server reached only through a private binding",
    );
  });

  it("reports the problems of every file at once and compiles nothing", () => {
    const files = new Set(problems.map((problem) => problem.split(":")[0]));
    expect(files.size).toBe(22);
    expect(compiled).toEqual([]);
  });

  it("passes the shipped catalog and compiles every namespace of it", () => {
    const shipped = checkCatalog(root);
    expect(shipped.problems).toEqual([]);
    expect(shipped.compiled.map((file) => file.namespace)).toEqual(["helpdesk", "shipping", "support"]);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
