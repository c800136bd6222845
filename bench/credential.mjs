// Mints the per-run upstream credential the proxy would send, so the benchmark can call the sandbox
// directly. Same format as src/upstream/credential.ts: `uc1.<base64url payload>.<base64url HMAC-SHA256>`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "../scripts/local-stack.mjs";

const encoder = new TextEncoder();
const base64url = (bytes) => Buffer.from(bytes).toString("base64url");

function upstreamKey() {
  const line = readFileSync(join(root, "sandbox", ".dev.vars"), "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("UPSTREAM_KEYS="));
  return JSON.parse(line.slice("UPSTREAM_KEYS=".length))[0];
}

export async function mintUpstreamCredential(claims) {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(upstreamKey()),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signed = `uc1.${base64url(encoder.encode(JSON.stringify(claims)))}`;
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(signed));
  return `${signed}.${base64url(new Uint8Array(mac))}`;
}
