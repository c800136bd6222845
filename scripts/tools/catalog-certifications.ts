// The evidence `npm run tools -- certify` left beside a namespace (`<ns>.certification.json`), read
// by `check`: validated with a located error, and judged against the namespace's declarations as
// they are now (a record of other declarations is stale). What it concludes is compiled with the
// catalog, so the Worker treats an upstream whose certification saw a second effect under one key
// as not honouring keys, and shows operators which upstreams are certified.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import {
  type Certification,
  CertificationRecordSchema,
  certificationOf,
  digestSubject,
} from "../../src/catalog/certification";
import type { CatalogFile } from "../../src/catalog/declaration";
import { formatPath } from "./located";

/** One upstream of a namespace as `check` reports it. */
export interface UpstreamStanding {
  namespace: string;
  upstream: string;
  /** certified, refuted, stale or declared (honoured or not); undecided for an upstream of reads only. */
  standing: string;
  /**
   * Set for an upstream sent the proxy's per-request JWT that no certification has shown refusing a
   * request without a valid one: nothing but its own word says it verifies them.
   */
  unverified_jwt: boolean;
}

/** The record's file for an environment: the sandbox's is the one the Worker's catalog compiles. */
export function certificationFileOf(directory: string, namespace: string, environment = "sandbox"): string {
  const suffix = environment === "sandbox" ? "" : `.${environment}`;
  return join(directory, `${namespace}.certification${suffix}.json`);
}

/**
 * The certification of each upstream of `file`, from its record in `directory` (none when there is
 * no record). `raw` is the namespace as parsed from YAML, before defaults: what the digest covers.
 */
export function certificationsOf(
  root: string,
  directory: string,
  file: CatalogFile,
  raw: unknown,
  problems: string[],
  environment = "sandbox",
): Record<string, Certification> {
  const path = certificationFileOf(directory, file.namespace, environment);
  if (!existsSync(path)) return {};
  const label = relative(root, path).split("\\").join("/");
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    problems.push(`${label}: (file): not JSON: ${(error as Error).message}`);
    return {};
  }
  const parsed = CertificationRecordSchema.safeParse(json);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push(
        `${label}: ${issue.path.length === 0 ? "(file)" : formatPath(issue.path)}: ${issue.message}`,
      );
    }
    return {};
  }
  const record = parsed.data;
  if (record.namespace !== file.namespace || record.environment !== environment) {
    problems.push(
      `${label}: namespace: a record of ${record.namespace} in ${record.environment}, not of ${file.namespace} in ${environment}`,
    );
    return {};
  }
  const certifications: Record<string, Certification> = {};
  for (const name of Object.keys(record.upstreams)) {
    if (!Object.hasOwn(file.upstreams, name)) {
      problems.push(`${label}: upstreams.${name}: not an upstream of ${file.namespace}; certify it again`);
      continue;
    }
    const digest = `sha256:${createHash("sha256")
      .update(digestSubject(raw as object, name))
      .digest("hex")}`;
    certifications[name] = certificationOf(record, name, digest);
  }
  return certifications;
}

/** How `check` names each upstream's standing: what the Worker will rely on, and why. */
export function standingsOf(
  file: CatalogFile,
  certifications: Record<string, Certification>,
): UpstreamStanding[] {
  return Object.entries(file.upstreams).map(([upstream, declaration]) => {
    const certification = certifications[upstream];
    const honoured =
      declaration.kind === "mcp" ? declaration.idempotency.honoured : declaration.idempotency?.honoured;
    const day = certification?.at?.slice(0, 10) ?? "";
    const standing =
      certification?.status === "refuted"
        ? `refuted ${day}: a second effect under one key; treated as not honouring keys`
        : certification?.status === "certified" && honoured
          ? `certified ${day}${certification.credential === "fail" ? " (but it accepted a request without a valid credential)" : ""}`
          : honoured === undefined
            ? "undecided (reads only)"
            : `declared: ${honoured ? "honours keys" : "does not honour keys"}${certification?.status === "stale" ? " (its certification is stale: certify it again)" : ""}`;
    const unverified_jwt =
      declaration.credential.kind === "proxy_jwt" && certification?.credential !== "pass";
    return { namespace: file.namespace, upstream, standing, unverified_jwt };
  });
}
