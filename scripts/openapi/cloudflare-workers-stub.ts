/**
 * `cloudflare:workers` for the worker code imported under Node by scripts/dump-openapi.mjs, which
 * only builds the OpenAPI document: the Durable Object classes need a base class to extend, and
 * nothing here is ever constructed or called. tsconfig.dump.json maps the module to this file.
 */
export class DurableObject<Env = unknown> {
  constructor(
    readonly ctx: unknown,
    readonly env: Env,
  ) {}
}

export class WorkerEntrypoint<Env = unknown> {
  constructor(
    readonly ctx: unknown,
    readonly env: Env,
  ) {}
}

export class RpcTarget {}

export const env: Record<string, unknown> = {};

/** The request-scoped `waitUntil` (health metrics are sent after each answer); never called here. */
export function waitUntil(_promise: Promise<unknown>): void {}
