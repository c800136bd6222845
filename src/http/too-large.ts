import type { Context } from "hono";
import { failure } from "../wire/envelope";
import type { AppEnv } from "./app-env";
import { requestContext, respond } from "./respond";

/** The 413 answer of a body over the size limit: an envelope like every other answer. */
export function tooLarge(maxBytes: number) {
  return (c: Context<AppEnv>) =>
    respond(
      c,
      failure(requestContext(c.env), {
        code: "validation_error",
        message: `The request body is larger than ${maxBytes} bytes.`,
        problems: [{ field: "body", reason: "too large", hint: `At most ${maxBytes} bytes.` }],
      }),
      { status: 413 },
    );
}
