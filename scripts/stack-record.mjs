// Which dev registry a local stack's workers registered in. `npm start` and startWrangler
// (scripts/local-stack.mjs) note it per port in .wrangler/local-stacks/<port>.json, so a client of
// that proxy (`npm run demo`, `npm run eval`) reaches the sandbox inside the same `wrangler dev`
// session whatever WRANGLER_REGISTRY_PATH the stack was started with.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const recordPath = (root, port) => join(root, ".wrangler", "local-stacks", `${port}.json`);

/**
 * The dev registry `npm start` on `port` registers its workers in: WRANGLER_REGISTRY_PATH when the
 * environment names one (wrangler's default folder included, to share it on purpose), else one of
 * this checkout's own, per port, under .wrangler/. Wrangler's default is one folder per machine: two
 * checkouts started side by side would register workers of the same names there, and a client of
 * one (`npm run demo`) could reach the other's sandbox.
 */
export function stackRegistry(root, port, env = process.env) {
  return env.WRANGLER_REGISTRY_PATH || join(root, ".wrangler", "registry", String(port));
}

/** Notes the registry (null: wrangler's default) of the stack on `port`; returns a function that removes the note. */
export function recordStack(root, port, registryPath) {
  const path = recordPath(root, port);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(
    path,
    `${JSON.stringify({ port: Number(port), registry_path: registryPath ?? null }, null, 2)}\n`,
  );
  return () => rmSync(path, { force: true });
}

/**
 * The registry noted for the stack serving `url`: a path, null for wrangler's default, or undefined
 * when no stack on that loopback port left a note (or the url is not on loopback).
 */
export function recordedRegistry(root, url) {
  const { hostname, port } = new URL(url);
  if (hostname !== "127.0.0.1" && hostname !== "localhost") return undefined;
  try {
    const record = JSON.parse(readFileSync(recordPath(root, port || "80"), "utf8"));
    return typeof record.registry_path === "string" ? record.registry_path : null;
  } catch {
    return undefined;
  }
}
