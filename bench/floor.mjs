// The floor worker: a bare Durable Object that does one SQLite INSERT per request, behind a Worker
// that forwards each request to it over RPC. What one object hop and one durable commit cost on
// this runtime, with nothing of the proxy's own work; the read goal is stated against it.
export const FLOOR_WORKER = "bench-floor";

const FLOOR_SCRIPT = `
import { DurableObject } from "cloudflare:workers";
export class Floor extends DurableObject {
  #woken = true;
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS hits (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)");
  }
  hit() {
    this.ctx.storage.sql.exec("INSERT INTO hits (at) VALUES (?)", Date.now());
    // The first hit since the object was constructed says so: the idle phase checks that its
    // objects really left memory.
    const answer = this.#woken ? "woken" : "ok";
    this.#woken = false;
    return answer;
  }
}
export default {
  async fetch(request, env) {
    const name = new URL(request.url).searchParams.get("object") ?? "floor";
    return new Response(await env.FLOOR.get(env.FLOOR.idFromName(name)).hit());
  },
};
`;

/** Miniflare's options for the floor worker (one SQLite-backed class, FLOOR). */
export const floorWorker = (compatibilityDate) => ({
  name: FLOOR_WORKER,
  modules: true,
  script: FLOOR_SCRIPT,
  compatibilityDate,
  durableObjects: { FLOOR: { className: "Floor", useSQLite: true } },
});
