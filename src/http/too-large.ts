import type { Context } from "hono";
import { loadConfig } from "../config/load";
import { failure } from "../envelope";
import type { AppEnv } from "./app-env";
import { newCallId, respond } from "./respond";

/** The 413 answer of a body over the size limit: an envelope like every other answer. */
export function tooLarge(maxBytes: number) {
  return (c: Context<AppEnv>) =>
    respond(
      c,
      failure(
        { call_id: newCallId(), environment: loadConfig(c.env).environment },
        {
          code: "validation_error",
          message: `The request body is larger than ${maxBytes} bytes.`,
          problems: [{ field: "body", reason: "too large", hint: `At most ${maxBytes} bytes.` }],
        },
      ),
      { status: 413 },
    );
}
