// The credential probes of `npm run tools -- certify`: the request of one tool of the upstream sent
// without a credential, with a JWT signed by a key the proxy never held, and with a valid JWT issued
// for another tool and for another request. Each must be refused with 401 or 403; a 2xx is a request
// served without a valid credential.
import type { ProbeResult } from "../../src/catalog/certification";
import {
  Effect,
  isWrite,
  judgeable,
  ok,
  otherArgsOf,
  type ProbeContext,
  type ProbeId,
  result,
  running,
  sendValid,
} from "./certify-kit";
import type { CertifyNamespace, CertifyTool, CertifyUpstream } from "./certify-namespace";
import { CertifyError } from "./certify-reach";
import {
  type Answer,
  claimsOf,
  excerpt,
  freshKey,
  requestOf,
  requiredStaticKey,
  send,
  signedFor,
  waitOf,
} from "./certify-send";

const CREDENTIAL_PROBES: ProbeId[] = ["no_credential", "forged_credential", "credential_for_other_request"];

/** What a request served without a valid credential did, named as well as its answer allows. */
function servedEffect(tool: CertifyTool, answer: Answer): string {
  try {
    return String(Effect.of(tool, answer));
  } catch (error) {
    if (error instanceof CertifyError) return `an effect (${answer.status})`;
    throw error;
  }
}

/** 401 or 403 from every answer passes; a 2xx (the request was served) or another 4xx fails. */
function credentialVerdict(tool: CertifyTool, probe: ProbeId, answers: Answer[]): ProbeResult {
  const accepted = answers.find(ok);
  if (accepted) {
    return result(
      tool,
      probe,
      "fail",
      `the upstream accepted a request without a valid credential (${accepted.status}).`,
    );
  }
  const other = answers.find((answer) => answer.status !== 401 && answer.status !== 403);
  if (other)
    return result(tool, probe, "fail", `answered ${other.status}, not 401 or 403: ${excerpt(other)}`);
  return result(
    tool,
    probe,
    "pass",
    `refused with ${[...new Set(answers.map((answer) => answer.status))].join(", ")}.`,
  );
}

/**
 * The tool whose request the credential probes send: in the sandbox, a write with arguments, else a
 * draft (it stores a record and reaches no one), else a read; in production only a read.
 */
function credentialSubject(ctx: ProbeContext, upstream: CertifyUpstream): CertifyTool | undefined {
  const withArgs = upstream.tools.filter((tool) => tool.args !== null);
  const reads = withArgs.filter((tool) => tool.declaration.side_effect === "read");
  if (ctx.environment !== "sandbox") return reads[0];
  const drafts = withArgs.filter((tool) => tool.declaration.side_effect === "draft");
  return withArgs.find(isWrite) ?? drafts[0] ?? reads[0];
}

/** Another tool's name, as the audience of a credential issued for another tool: a sibling's when there is one. */
function otherAudience(upstream: CertifyUpstream, tool: CertifyTool): string {
  const name = tool.declaration.name;
  const sibling = upstream.tools.find((candidate) => candidate.declaration.name !== name);
  return sibling?.declaration.name ?? `${name}_other`;
}

/**
 * The three credential probes of an upstream, on the request of `credentialSubject`, each under a
 * fresh key when it is a write; skipped, saying why, when the upstream takes no credential or no
 * tool declares the arguments to send.
 */
export async function credentialProbes(
  ctx: ProbeContext,
  ns: CertifyNamespace,
  upstream: CertifyUpstream,
): Promise<ProbeResult[]> {
  const subject = credentialSubject(ctx, upstream);
  const named = subject ?? upstream.tools[0];
  if (!named) return [];
  const skipAll = (detail: string) =>
    CREDENTIAL_PROBES.map((probe) => {
      const skipped = result(named, probe, "skipped", detail);
      ctx.report(skipped);
      return skipped;
    });
  if (upstream.declaration.credential.kind === "none")
    return skipAll("the upstream takes no credential (credential: none)");
  if (!subject) {
    return skipAll(
      ctx.environment === "sandbox"
        ? "declare certify.args"
        : "declare certify.args on a read tool (production gets reads only)",
    );
  }
  const args = subject.args ?? {};
  const key = isWrite(subject) ? freshKey() : null;
  const request = requestOf(subject, upstream, args, key);
  const base = await ctx.reach(upstream.name);
  const wait = waitOf(subject);
  const attempt = async (probe: ProbeId, authorization: Parameters<typeof send>[2]) => {
    const answer = judgeable(await send(base, request, authorization, ctx.headers, wait), probe);
    if (ok(answer) && key !== null)
      ctx.effects.push(`${subject.declaration.name} ${servedEffect(subject, answer)}`);
    return answer;
  };
  const credential = upstream.declaration.credential;
  // The proxy sends a declared static header or query key, never its JWT in its place: without the
  // secret it sends nothing (production does not start; a sandbox call answers configuration_error),
  // so neither can a certification, whose refusals without the key would then prove nothing.
  const staticKey = credential.kind === "static_header" || credential.kind === "static_query";
  if (staticKey) requiredStaticKey(ctx.signer, upstream);
  // A read has shown no valid request yet: unless it is served with the proxy's credential, a
  // refusal without one would prove nothing.
  const canSign = staticKey || ctx.signer.keys !== null;
  if (key === null && canSign) {
    await running(subject, "no_credential", async () => {
      const valid = judgeable(
        await sendValid(ctx, ns, subject, args, null),
        "the read with a valid credential",
      );
      if (!ok(valid)) {
        throw new CertifyError(
          `the read with a valid credential answered ${valid.status} (${excerpt(valid)}): certify.args must make a read the upstream serves`,
        );
      }
    });
  }
  const results: ProbeResult[] = [];
  const add = (probe: ProbeResult) => {
    results.push(probe);
    ctx.report(probe);
  };
  add(
    await running(subject, "no_credential", async () =>
      credentialVerdict(subject, "no_credential", [await attempt("no_credential", null)]),
    ),
  );
  add(
    await running(subject, "forged_credential", async () => {
      const forged =
        credential.kind === "static_header"
          ? { header: credential.header, value: `${credential.prefix ?? ""}${freshKey()}` }
          : credential.kind === "static_query"
            ? { query: credential.param, value: freshKey() }
            : await signedFor(
                ctx.signer,
                [ctx.forged],
                subject.declaration.name,
                claimsOf(request, key),
                wait,
              );
      return credentialVerdict(subject, "forged_credential", [await attempt("forged_credential", forged)]);
    }),
  );
  const keys = ctx.signer.keys;
  if (staticKey) {
    add(
      result(
        subject,
        "credential_for_other_request",
        "skipped",
        `a static ${credential.kind === "static_query" ? "query key" : "header"} is not bound to one request`,
      ),
    );
  } else if (!keys) {
    add(
      result(
        subject,
        "credential_for_other_request",
        "skipped",
        "set UPSTREAM_SIGNING_KEYS to sign a valid credential for another request",
      ),
    );
  } else {
    add(
      await running(subject, "credential_for_other_request", async () => {
        const claims = claimsOf(request, key);
        const other = key === null ? null : otherArgsOf(subject, args);
        const elsewhere =
          key === null
            ? { ...claims, target: `${claims.target}${claims.target.includes("?") ? "&" : "?"}certify=other` }
            : other
              ? claimsOf(requestOf(subject, upstream, other.args, key), key)
              : { ...claims, idempotency_key: freshKey() };
        const answers = [
          await attempt(
            "credential_for_other_request",
            await signedFor(ctx.signer, keys, otherAudience(upstream, subject), claims, wait),
          ),
          await attempt(
            "credential_for_other_request",
            await signedFor(ctx.signer, keys, subject.declaration.name, elsewhere, wait),
          ),
        ];
        return credentialVerdict(subject, "credential_for_other_request", answers);
      }),
    );
  }
  return results;
}
