// The probes of one upstream: each write tool with `certify.args` sent twice under one key (the
// second send must make no second effect), its postcondition read, the key sent again with another
// body (refused or ignored, never applied), then the credential probes (certify-credentials.ts). A
// probe that cannot be judged (the upstream out of reach, a 5xx, a first write refused) is a
// CertifyError: the certification then writes nothing.
import type { ProbeResult } from "../../src/catalog/certification";
import { fillTemplate } from "../../src/catalog/templates";
import { credentialProbes } from "./certify-credentials";
import {
  Effect,
  isWrite,
  judgeable,
  ok,
  otherArgsOf,
  type ProbeContext,
  type ProbeId,
  refused,
  result,
  running,
  sendValid,
} from "./certify-kit";
import type { Args, CertifyNamespace, CertifyTool, CertifyUpstream } from "./certify-namespace";
import { CertifyError } from "./certify-reach";
import { type Answer, excerpt, freshKey } from "./certify-send";

const WRITE_PROBES: ProbeId[] = ["key_reuse_same_body", "postcondition_read", "key_reuse_other_body"];

/** The postcondition's read of the first send's effect, judged by the tool's own verdict. */
async function postconditionRead(
  ctx: ProbeContext,
  ns: CertifyNamespace,
  tool: CertifyTool,
  args: Args,
  first: Answer,
  effect: Effect,
): Promise<ProbeResult> {
  const postcondition = tool.declaration.postcondition;
  const observe = tool.spec.observe;
  if (!postcondition || !observe)
    return result(tool, "postcondition_read", "skipped", "the tool declares no postcondition");
  const reader = ns.tool(postcondition.tool);
  if (!reader) {
    return result(
      tool,
      "postcondition_read",
      "skipped",
      `its postcondition reads ${postcondition.tool}, which is not a tool of ${ns.namespace}`,
    );
  }
  const readArgs = fillTemplate(postcondition.args, args, first.body) as Args;
  const read = judgeable(await sendValid(ctx, ns, reader, readArgs, null), postcondition.tool);
  if (!ok(read) && read.status !== 404) {
    return result(
      tool,
      "postcondition_read",
      "fail",
      `${postcondition.tool} answered ${read.status}: ${excerpt(read)}`,
    );
  }
  const verdict = observe.verify(args, first.body, ok(read) ? read.body : null);
  return verdict.ok
    ? result(tool, "postcondition_read", "pass", `${postcondition.tool} finds the effect (${effect}).`)
    : result(tool, "postcondition_read", "fail", verdict.message);
}

/** The three key probes of one write tool, in the order they run. */
async function writeProbes(
  ctx: ProbeContext,
  ns: CertifyNamespace,
  tool: CertifyTool,
  args: Args,
): Promise<ProbeResult[]> {
  const key = freshKey();
  const results: ProbeResult[] = [];
  const add = (probe: ProbeResult) => {
    results.push(probe);
    ctx.report(probe);
  };
  const { first, effect } = await running(tool, "key_reuse_same_body", async () => {
    const first = judgeable(await sendValid(ctx, ns, tool, args, key), "the first send");
    if (!ok(first)) {
      throw new CertifyError(
        `the first send answered ${first.status} (${excerpt(first)}): certify.args must make a write the upstream accepts`,
      );
    }
    const effect = Effect.of(tool, first);
    ctx.effects.push(`${tool.declaration.name} ${effect}`);
    const second = judgeable(await sendValid(ctx, ns, tool, args, key), "the second send");
    if (refused(second)) {
      add(
        result(
          tool,
          "key_reuse_same_body",
          "pass",
          `a second send under the same key was refused with ${second.status}, so it made no second effect.`,
        ),
      );
    } else {
      const again = Effect.of(tool, second);
      if (again.same(effect)) {
        add(
          result(
            tool,
            "key_reuse_same_body",
            "pass",
            `a second send under the same key answered the first effect (${effect}).`,
          ),
        );
      } else {
        ctx.effects.push(`${tool.declaration.name} ${again}`);
        add(
          result(
            tool,
            "key_reuse_same_body",
            "fail",
            `the upstream made a second effect: ${effect.against(again)}.`,
          ),
        );
      }
    }
    return { first, effect };
  });
  add(await running(tool, "postcondition_read", () => postconditionRead(ctx, ns, tool, args, first, effect)));
  const other = otherArgsOf(tool, args);
  if (!other) {
    add(
      result(
        tool,
        "key_reuse_other_body",
        "skipped",
        "no numeric or free-text argument to change for another body",
      ),
    );
    return results;
  }
  add(
    await running(tool, "key_reuse_other_body", async () => {
      const third = judgeable(await sendValid(ctx, ns, tool, other.args, key), "the send with another body");
      if (refused(third)) {
        return result(
          tool,
          "key_reuse_other_body",
          "pass",
          `the same key with another ${other.field} was refused with ${third.status}.`,
        );
      }
      const applied = Effect.of(tool, third);
      if (applied.same(effect)) {
        return result(
          tool,
          "key_reuse_other_body",
          "pass",
          `the same key with another ${other.field} answered the first effect: ignored, not applied.`,
        );
      }
      ctx.effects.push(`${tool.declaration.name} ${applied}`);
      return result(
        tool,
        "key_reuse_other_body",
        "fail",
        `the upstream applied another body under a used key: ${effect.against(applied)}.`,
      );
    }),
  );
  return results;
}

/** Every probe of one upstream, in the order run: each write tool's, then the credential probes. */
export async function certifyUpstream(
  ctx: ProbeContext,
  ns: CertifyNamespace,
  upstream: CertifyUpstream,
): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  const skip = (tool: CertifyTool, probes: ProbeId[], detail: string) => {
    for (const probe of probes) {
      const skipped = result(tool, probe, "skipped", detail);
      results.push(skipped);
      ctx.report(skipped);
    }
  };
  if (upstream.declaration.kind === "mcp") {
    const [first] = upstream.tools;
    if (first)
      skip(
        first,
        [...WRITE_PROBES, "no_credential", "forged_credential", "credential_for_other_request"],
        "an mcp upstream: certify probes http upstreams only",
      );
    return results;
  }
  for (const tool of upstream.tools.filter(isWrite)) {
    if (ctx.environment === "production")
      skip(tool, WRITE_PROBES, "production: certify sends no writes there; certify the sandbox for them");
    else if (!tool.args) skip(tool, WRITE_PROBES, "declare certify.args");
    else results.push(...(await writeProbes(ctx, ns, tool, tool.args)));
  }
  results.push(...(await credentialProbes(ctx, ns, upstream)));
  return results;
}
