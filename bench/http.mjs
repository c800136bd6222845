// The benchmark's HTTP client: node:http over keep-alive sockets, lighter than fetch, so that on a
// small machine the client takes as little CPU from workerd as it can. Loopback only.
import http from "node:http";

// workerd closes a connection after 5 s idle, every idle one at once; a request sent on one as it
// closes is reset ("socket hang up" on a reused socket). Free sockets are dropped here after 4 s
// (an active request's timeout only emits an event nobody acts on), but on a busy machine that timer
// fires late: a batch after a pause drops the pool first (`dropIdleConnections`), and a reset
// request is resent on a connection of its own.
const agent = new http.Agent({ keepAlive: true, maxSockets: 512, timeout: 4_000 });

/** Requests sent again because workerd had closed the keep-alive connection they were sent on:
 * each is one more request, and a throughput batch counts it. */
export const resent = { count: 0 };

function sendOnce(target, method, headers, payload, viaAgent = agent) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      target,
      {
        method,
        agent: viaAgent,
        headers: payload ? { ...headers, "content-length": payload.length } : headers,
      },
      (response) => {
        const chunks = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", (error) => reject(Object.assign(error, { reusedSocket: request.reusedSocket })));
    request.end(payload);
  });
}

/**
 * Sends one request and resolves with its status and whole body; never rejects on a status.
 *
 * A request reset on a reused keep-alive connection is sent once more, as Node's documentation
 * advises: the server had closed that connection (at c=64 workerd at times resets a batch of them
 * at once) and the request got no answer. A read sent twice is harmless; a write sent twice would
 * come back as a replay and fail the check. `resent` counts them, for the report.
 *
 * @param {string} url
 * @param {{ method?: string, headers?: Record<string, string>, body?: string }} [options]
 * @example
 *   const { status, body } = await send(`${url}/healthz`);
 */
export async function send(url, { method = "GET", headers = {}, body } = {}) {
  const target = new URL(url);
  if (target.hostname !== "127.0.0.1") throw new Error(`bench: refusing ${target.host}, not loopback`);
  const payload = body === undefined ? undefined : Buffer.from(body);
  try {
    return await sendOnce(target, method, headers, payload).catch((error) => {
      if (!error.reusedSocket || !["ECONNRESET", "EPIPE"].includes(error.code)) throw error;
      resent.count++;
      // On a connection of its own: workerd resets pooled connections in batches, and another
      // pooled socket may be one of the same batch (a resend there failed the bench's 10,000-call run).
      return sendOnce(target, method, headers, payload, false);
    });
  } catch (error) {
    throw new Error(`bench: ${method} ${target.pathname}${target.search} got no answer: ${error.message}`);
  }
}

/** Throws, naming what was measured and what came back, unless the answer is a 2xx. */
export function expectOk(label, response) {
  if (response.status >= 200 && response.status < 300) return response;
  throw new Error(
    `bench: ${label} answered ${response.status}, not 2xx: ${response.body.toString("utf8").slice(0, 400)}`,
  );
}

/** The JSON body of a 2xx answer. */
export function okJson(label, response) {
  return JSON.parse(expectOk(label, response).body.toString("utf8"));
}

/** Closes every pooled connection not in use, so the next requests open fresh ones. */
export function dropIdleConnections() {
  for (const sockets of Object.values(agent.freeSockets))
    for (const socket of sockets ?? []) socket.destroy();
}

/** Frees the keep-alive sockets so the process can exit. */
export function closeConnections() {
  agent.destroy();
}
