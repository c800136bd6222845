import type { Envelope } from "../src/wire/envelope";
import type { RunClient } from "./client";
import type { PlannedCall } from "./types";

/**
 * Sends a planned call, or its `parallel` identical copies at once. With copies, the answer that
 * matters is a success if any copy got one, else the first failure: what an agent that fired
 * parallel tool calls would act on. `waitS` waits for a pending approval's decision (`Prefer: wait`).
 */
export async function sendPlanned(
  client: RunClient,
  step: PlannedCall,
  previous: unknown = null,
  opts: { waitS?: number } = {},
): Promise<Envelope> {
  const copies = Math.max(1, step.parallel ?? 1);
  const args = argsOf(step, previous);
  const answers = await Promise.all(
    Array.from({ length: copies }, () =>
      client.call(step.tool, args, { intent: step.intent ?? null, ...opts }),
    ),
  );
  const first = answers[0] as Envelope;
  return answers.find((answer) => answer.outcome === "success") ?? first;
}

/** The step's arguments, with those it copies from the previous successful call's data filled in. */
export function argsOf(step: PlannedCall, previous: unknown): Record<string, unknown> {
  if (!step.fromPrevious) return step.args;
  const data = (typeof previous === "object" && previous !== null ? previous : {}) as Record<string, unknown>;
  const copied = Object.fromEntries(
    Object.entries(step.fromPrevious).map(([arg, field]) => [arg, data[field] ?? null]),
  );
  return { ...step.args, ...copied };
}
