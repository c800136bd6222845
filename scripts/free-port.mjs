// A loopback port the operating system has just handed out, for a local stack or a test server.
import { createServer } from "node:net";

/**
 * Asks the OS for a free loopback port (listen on port 0) and releases it at once, so a process
 * that takes the number next (wrangler dev, an example server) finds it free. No fixed number: a
 * stack left running by an interrupted earlier run, or one beside it, never holds the one chosen.
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("the OS handed out no loopback port"));
      });
    });
  });
}
