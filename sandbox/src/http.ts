import type { ErrorBody } from "./model";

/** JSON the way the upstream serializes it; idempotency replays resend exactly this text. */
export function jsonText(body: unknown): string {
  return JSON.stringify(body);
}

export function jsonResponse(status: number, text: string, headers: Record<string, string> = {}): Response {
  return new Response(text, {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

export function errorBody(code: string, message: string): ErrorBody {
  return { error: { code, message } };
}

export function errorResponse(status: number, code: string, message: string): Response {
  return jsonResponse(status, jsonText(errorBody(code, message)));
}
