import type { Context } from "hono";

/** Where the console serves its one script; the CSP allows scripts from this origin only. */
export const LIVE_SCRIPT_PATH = "/console/assets/live.js";

/** How often a visible page asks for its live regions again. */
export const LIVE_PERIOD_MS = 5_000;

/**
 * Live regions without reloads. An element marked `data-live="<fragment URL>"` gets its content
 * replaced by a fresh server rendering of that fragment (the same JSX component the page rendered)
 * every few seconds while the tab is visible, and at once when it becomes visible again. Nothing
 * is replaced under a keyboard user's focus; a signed-out session stops the updates and says so
 * in the region's `.live-stamp`. Plain ES2017, no dependencies: browsers run it as written.
 */
export const LIVE_SCRIPT = `"use strict";
(function () {
  var PERIOD_MS = ${LIVE_PERIOD_MS};
  var regions = Array.prototype.slice.call(document.querySelectorAll("[data-live]"));
  if (regions.length === 0) return;
  var timer = null;
  var busy = false;
  var ended = false;

  function say(region, text) {
    region.classList.add("live-stale");
    var stamp = region.querySelector(".live-stamp");
    if (stamp) stamp.textContent = text;
  }

  async function refresh(region) {
    var focused = document.activeElement;
    if (focused && focused !== document.body && region.contains(focused)) return;
    var response;
    try {
      response = await fetch(region.getAttribute("data-live"), {
        credentials: "same-origin",
        redirect: "manual",
        cache: "no-store",
        headers: { accept: "text/html" },
      });
    } catch (error) {
      say(region, "Could not reach the console; trying again.");
      return;
    }
    if (response.type === "opaqueredirect" || response.status === 401 || response.status === 403) {
      ended = true;
      stop();
      say(region, "Your session has ended: reload the page to sign in again.");
      return;
    }
    if (!response.ok) {
      say(region, "Could not refresh (HTTP " + response.status + "); trying again.");
      return;
    }
    var html = await response.text();
    region.innerHTML = html;
    region.classList.remove("live-stale");
  }

  async function tick() {
    if (busy || ended || document.visibilityState !== "visible") return;
    busy = true;
    try {
      await Promise.all(regions.map(refresh));
    } finally {
      busy = false;
    }
  }

  function start() {
    if (timer === null && !ended) timer = setInterval(tick, PERIOD_MS);
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") {
      tick();
      start();
    } else {
      stop();
    }
  });
  if (document.visibilityState === "visible") start();
})();
`;

/** `GET /console/assets/live.js`: the same for everyone, so it may be cached, briefly, across deploys. */
export function serveLiveScript(c: Context) {
  c.header("Content-Type", "text/javascript; charset=utf-8");
  c.header("Cache-Control", "public, max-age=300");
  return c.body(LIVE_SCRIPT);
}
