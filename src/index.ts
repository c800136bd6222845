import { app } from "./app";
import type { Env } from "./env";

export { ApprovalDirectory } from "./approvals/directory";
export { RunLedger } from "./ledger/run-ledger";
export { RateLimiter } from "./ratelimit/rate-limiter";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
