import * as z from "zod";
import { canonicalJson } from "../core/canonical-json";
import { sha256Hex } from "../core/digest";

/**
 * The certification of a namespace's upstreams: what `npm run tools -- certify` found when it sent
 * each write twice under one idempotency key, and requests without a valid credential, to the
 * sandbox (`catalog/<namespace>.certification.json`). The proxy's exactly-once promise rests on an
 * upstream that applies a key once; this record is the evidence, bound by a digest to the
 * declarations it was measured against, so an edit of the upstream or of one of its tools makes it
 * stale. Pure: the command line writes it, the Worker may read it.
 */

/** Each probe a certification runs, in the order it reports them. */
export const CERTIFICATION_PROBES = [
  /** A second send with the same key and body makes no second effect. */
  "key_reuse_same_body",
  /** The tool's postcondition read finds the effect of the first send. */
  "postcondition_read",
  /** The same key with another body is refused (4xx) or ignored (the first effect), never applied. */
  "key_reuse_other_body",
  /** A request without a credential is refused with 401 or 403. */
  "no_credential",
  /** A JWT signed by a key the proxy does not hold is refused with 401 or 403. */
  "forged_credential",
  /** A valid JWT issued for another tool or another request is refused with 401 or 403. */
  "credential_for_other_request",
] as const;

type ProbeId = (typeof CERTIFICATION_PROBES)[number];

const KEY_REUSE_PROBES: readonly ProbeId[] = ["key_reuse_same_body", "key_reuse_other_body"];
const CREDENTIAL_PROBES: readonly ProbeId[] = [
  "no_credential",
  "forged_credential",
  "credential_for_other_request",
];

const ProbeResultSchema = z.strictObject({
  tool: z.string().min(1),
  probe: z.enum(CERTIFICATION_PROBES),
  result: z.enum(["pass", "fail", "skipped"]),
  /** One sentence: what was seen, or why the probe was skipped. */
  detail: z.string().min(1),
});

const UpstreamCertificationSchema = z.strictObject({
  /** `upstreamDigest` of the declarations the probes ran against. */
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /** `fail` when any probe failed; skipped probes fail nothing. */
  verdict: z.enum(["pass", "fail"]),
  probes: z.array(ProbeResultSchema),
});

export const CertificationRecordSchema = z.strictObject({
  format: z.literal(1),
  namespace: z.string().min(1),
  environment: z.enum(["sandbox", "production"]),
  certified_at: z.iso.datetime(),
  upstreams: z.record(z.string().regex(/^[A-Z][A-Z0-9_]*$/), UpstreamCertificationSchema),
});

export type CertificationRecord = z.infer<typeof CertificationRecordSchema>;
export type ProbeResult = z.infer<typeof ProbeResultSchema>;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * `sha256:` of the canonical JSON of `{ upstream, tools }`: the upstream's declaration and the
 * declarations of the tools whose `request.upstream` names it, sorted by name, as parsed from the
 * namespace's YAML (before any default is filled in). Any edit of either makes a record stale.
 */
export async function upstreamDigest(
  file: { upstreams?: unknown; tools?: unknown },
  upstream: string,
): Promise<string> {
  return `sha256:${await sha256Hex(digestSubject(file, upstream))}`;
}

/** What `upstreamDigest` hashes: the canonical JSON of `{ upstream, tools }` (sync hashers use it too). */
export function digestSubject(file: { upstreams?: unknown; tools?: unknown }, upstream: string): string {
  const declared = isRecord(file.upstreams) ? (file.upstreams[upstream] ?? null) : null;
  const tools = (Array.isArray(file.tools) ? file.tools : [])
    .filter((tool) => isRecord(tool) && isRecord(tool.request) && tool.request.upstream === upstream)
    .sort((a, b) => {
      const [x, y] = [String((a as { name?: unknown }).name), String((b as { name?: unknown }).name)];
      return x < y ? -1 : x > y ? 1 : 0;
    });
  return canonicalJson({ upstream: declared, tools });
}

/** `fail` when any of `probes` failed, `pass` when one passed and none failed, null when none ran. */
function outcomeOf(results: readonly ProbeResult[], probes: readonly ProbeId[]): "pass" | "fail" | null {
  const ran = results.filter((result) => probes.includes(result.probe) && result.result !== "skipped");
  if (ran.some((result) => result.result === "fail")) return "fail";
  return ran.length > 0 ? "pass" : null;
}

/** What a record says of one upstream now: see `certificationOf`. */
export interface Certification {
  status: "certified" | "refuted" | "stale" | "none";
  key_reuse: "pass" | "fail" | null;
  credential: "pass" | "fail" | null;
  at: string | null;
}

/**
 * Whether the upstream may be relied on to apply an idempotency key once. `none`: no record of it,
 * or its key probes were all skipped. `stale`: the record was measured against other declarations
 * than `currentDigest`'s, so it says nothing of these (its outcomes are still given). `refuted`: a
 * key-reuse probe failed. `certified`: the key-reuse probes that ran all passed. The credential
 * probes are reported beside it (`credential`), not folded into the status.
 */
export function certificationOf(
  record: CertificationRecord | undefined,
  upstream: string,
  currentDigest: string,
): Certification {
  const entry = record?.upstreams[upstream];
  if (!record || !entry) return { status: "none", key_reuse: null, credential: null, at: null };
  const key_reuse = outcomeOf(entry.probes, KEY_REUSE_PROBES);
  const credential = outcomeOf(entry.probes, CREDENTIAL_PROBES);
  const status =
    entry.digest !== currentDigest
      ? "stale"
      : key_reuse === "fail"
        ? "refuted"
        : key_reuse === "pass"
          ? "certified"
          : "none";
  return { status, key_reuse, credential, at: record.certified_at };
}
