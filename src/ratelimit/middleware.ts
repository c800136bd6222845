import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app-env";
import { requestContext, respond } from "../http/respond";
import { type FailureSpec, failure } from "../wire/envelope";
import { admitRunOpen } from "./admission";

function refuse(c: Parameters<MiddlewareHandler<AppEnv>>[0], spec: FailureSpec) {
  return respond(c, failure(requestContext(c.env), spec));
}

/** For `POST /v1/runs`, after `requireRunOpener`. */
export const limitRunOpens: MiddlewareHandler<AppEnv> = async (c, next) => {
  const refusal = await admitRunOpen(c.env, c.get("tenant"));
  if (refusal) return refuse(c, refusal);
  await next();
};
