#!/usr/bin/env node
// The browser tests drive Debian's Chromium. `npm test` runs this first, so a fresh machine needs
// nothing installed by hand: when the browser is missing it is installed from Debian's packages
// (as root, or through passwordless sudo), and otherwise the test run stops saying what to do.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

function run(command, args) {
  const result = spawnSync(command, args, { stdio: ["ignore", "ignore", "inherit"] });
  return result.status === 0;
}

function privileged() {
  if (process.getuid?.() === 0) return [];
  if (run("sudo", ["-n", "true"])) return ["sudo", "-n"];
  return null;
}

if (existsSync(CHROMIUM)) process.exit(0);

const prefix = privileged();
if (prefix === null || !run("sh", ["-c", "command -v apt-get"])) {
  console.error(
    `No Chromium at ${CHROMIUM}, and it cannot be installed from here (needs apt-get as root or passwordless sudo).\n` +
      "Install it with `apt-get install chromium`, or set CHROMIUM_PATH to a Chromium binary.",
  );
  process.exit(1);
}
console.log(`No Chromium at ${CHROMIUM}: installing Debian's chromium package for the browser tests…`);
const [command, ...rest] = [...prefix, "apt-get"];
const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
const apt = (args) => spawnSync(command, [...rest, ...args], { stdio: "inherit", env }).status === 0;
if (!apt(["update", "-qq"]) || !apt(["install", "-y", "-qq", "--no-install-recommends", "chromium"])) {
  console.error("Installing chromium with apt-get failed; see the output above.");
  process.exit(1);
}
if (!existsSync(CHROMIUM)) {
  console.error(`chromium was installed, but not at ${CHROMIUM}; set CHROMIUM_PATH to where it is.`);
  process.exit(1);
}
