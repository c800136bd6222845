// The floor worker: a bare Durable Object that does one SQLite INSERT per request, behind a Worker
// that forwards each request to it over RPC. What one object hop and one durable commit cost on
// this runtime, with nothing of the proxy's own work; the read goal is stated against it. With
// `?upstream`, its object first fetches the hello worker through a service binding: one object
// hop, one upstream hop and one commit, the least any read through a run's object to an upstream
// can cost, which the bench shows beside the read goal.
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
  async hitThroughUpstream() {
    const upstream = await this.env.UPSTREAM.fetch("http://upstream/");
    if (!upstream.ok) throw new Error("the floor worker's upstream answered " + upstream.status);
    await upstream.arrayBuffer();
    return this.hit();
  }
}
export default {
  async fetch(request, env) {
    const query = new URL(request.url).searchParams;
    const object = env.FLOOR.get(env.FLOOR.idFromName(query.get("object") ?? "floor"));
    return new Response(await (query.has("upstream") ? object.hitThroughUpstream() : object.hit()));
  },
};
`;

/**
 * Miniflare's options for the floor worker (one SQLite-backed class, FLOOR), its upstream hop
 * bound to the worker named `upstream` (the hello worker).
 */
export const floorWorker = (compatibilityDate, upstream) => ({
  name: FLOOR_WORKER,
  modules: true,
  script: FLOOR_SCRIPT,
  compatibilityDate,
  durableObjects: { FLOOR: { className: "Floor", useSQLite: true } },
  serviceBindings: { UPSTREAM: upstream },
});
