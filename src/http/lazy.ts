import { type Handler, Hono, type Env as HonoEnv } from "hono";
import type { AppEnv } from "./app-env";

/**
 * A part of the app that is loaded on its first request, not when the isolate starts: the MCP
 * server (its SDK is most of the startup cost), the console and the API docs. `load` imports the
 * part and returns its routes as they would be mounted at `prefix`; the bundler keeps a dynamically
 * imported module's top level unevaluated until the import runs, so a proxy that only serves tool
 * calls never pays for them.
 */
export function lazyRoutes<E extends HonoEnv>(prefix: string, load: () => Promise<Hono<E>>): Handler<AppEnv> {
  let mounted: Promise<Hono<E>> | undefined;
  return async (c) => {
    mounted ??= load().then((part) => new Hono<E>().route(prefix, part));
    const app = await mounted.catch((error: unknown) => {
      // A failed import is retried by the next request rather than cached as a broken part.
      mounted = undefined;
      throw error;
    });
    return app.fetch(c.req.raw, c.env, executionContextOf(c));
  };
}

/** The request's ExecutionContext, which a test's direct `app.request` may not have. */
function executionContextOf(c: { executionCtx: ExecutionContext }): ExecutionContext | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}
