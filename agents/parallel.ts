import type { Envelope } from "../src/envelope";
import type { RunClient } from "./client";
import type { PlannedCall } from "./types";

/**
 * Sends a planned call, or its `parallel` identical copies at once. With copies, the answer that
 * matters is a success if any copy got one, else the first failure: what an agent that fired
 * parallel tool calls would act on.
 */
export async function sendPlanned(client: RunClient, step: PlannedCall): Promise<Envelope> {
  const copies = Math.max(1, step.parallel ?? 1);
  const answers = await Promise.all(
    Array.from({ length: copies }, () => client.call(step.tool, step.args, { intent: step.intent ?? null })),
  );
  const first = answers[0] as Envelope;
  return answers.find((answer) => answer.outcome === "success") ?? first;
}
