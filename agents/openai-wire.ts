/**
 * The two OpenAI wire formats an OpenAI-compatible endpoint may speak, behind one shape the agent
 * loop (openai-compatible.ts) drives: Chat Completions (`POST /chat/completions`, `messages`,
 * `tool_calls`) and Responses (`POST /responses`, `input` items, `function_call` outputs). Each
 * names the tool-spec format the proxy serves for it (`GET /v1/tools?format=`), builds a turn's
 * request, reads the model's turn, and records tool results in its own conversation shape.
 */

export type WireApi = "chat" | "responses";
export const WIRE_APIS: readonly WireApi[] = ["chat", "responses"];

/** One function call the model asked for, in either format. */
export interface ModelToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them: JSON text, or not. */
  arguments: string;
}

/** What the model did in one turn. */
export interface ModelTurn {
  text: string | null;
  /** Set when the model declined the task (`refusal`): the loop ends there. */
  refusal: string | null;
  calls: ModelToolCall[];
  /** The items to keep in the conversation for the next turn (the assistant message, the output items). */
  kept: unknown[];
}

export interface Wire {
  readonly path: string;
  readonly toolsFormat: "openai" | "openai-responses";
  /** The conversation's first items: the instructions and the task. */
  open(system: string, prompt: string): unknown[];
  /** The body of one turn's request; `temperature` left out when null. */
  request(
    model: string,
    temperature: number | null,
    conversation: readonly unknown[],
    tools: readonly unknown[],
  ): Record<string, unknown>;
  /** The model's turn, from the endpoint's JSON answer; throws on a body that is neither. */
  read(body: unknown): ModelTurn;
  /** The conversation items that hand each call's answer back to the model, in the calls' order. */
  results(calls: readonly ModelToolCall[], answers: readonly string[]): unknown[];
}

const temperatureOf = (temperature: number | null) => (temperature === null ? {} : { temperature });

interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

interface ChatCompletion {
  choices?: Array<{
    message?: {
      role: "assistant";
      content: string | null;
      refusal?: string | null;
      tool_calls?: ChatToolCall[];
    };
  }>;
}

const chat: Wire = {
  path: "/chat/completions",
  toolsFormat: "openai",
  open: (system, prompt) => [
    { role: "system", content: system },
    { role: "user", content: prompt },
  ],
  request: (model, temperature, conversation, tools) => ({
    model,
    messages: conversation,
    tools,
    tool_choice: "auto",
    ...temperatureOf(temperature),
  }),
  read(body) {
    const message = (body as ChatCompletion).choices?.[0]?.message;
    if (!message) throw new Error("the chat completion has no choice with a message");
    const calls = (message.tool_calls ?? []).map((call) => ({
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    }));
    return {
      text: message.content ?? null,
      refusal: message.refusal ?? null,
      calls,
      kept: [
        {
          role: "assistant",
          content: message.content ?? null,
          ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}),
        },
      ],
    };
  },
  results: (calls, answers) =>
    calls.map((call, index) => ({ role: "tool", tool_call_id: call.id, content: answers[index] ?? "" })),
};

type ResponsesItem =
  | { type: "message"; role: "assistant"; content?: Array<{ type: string; text?: string; refusal?: string }> }
  | { type: "function_call"; id?: string; call_id: string; name: string; arguments: string }
  | { type: string };

const responses: Wire = {
  path: "/responses",
  toolsFormat: "openai-responses",
  open: (system, prompt) => [
    { role: "system", content: system },
    { role: "user", content: prompt },
  ],
  // Stateless: every turn sends the whole conversation, so nothing is stored at the provider.
  request: (model, temperature, conversation, tools) => ({
    model,
    input: conversation,
    tools,
    tool_choice: "auto",
    store: false,
    ...temperatureOf(temperature),
  }),
  read(body) {
    const output = (body as { output?: ResponsesItem[] }).output;
    if (!Array.isArray(output)) throw new Error("the response has no output items");
    const texts: string[] = [];
    const refusals: string[] = [];
    const calls: ModelToolCall[] = [];
    for (const item of output) {
      if (item.type === "function_call" && "call_id" in item) {
        calls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
      } else if (item.type === "message" && "content" in item) {
        for (const part of item.content ?? []) {
          if (part.type === "output_text" && part.text !== undefined) texts.push(part.text);
          if (part.type === "refusal" && part.refusal !== undefined) refusals.push(part.refusal);
        }
      }
    }
    return {
      text: texts.length > 0 ? texts.join("\n") : null,
      refusal: refusals.length > 0 ? refusals.join("\n") : null,
      calls,
      kept: output,
    };
  },
  results: (calls, answers) =>
    calls.map((call, index) => ({
      type: "function_call_output",
      call_id: call.id,
      output: answers[index] ?? "",
    })),
};

export function wireFor(api: WireApi): Wire {
  return api === "chat" ? chat : responses;
}
