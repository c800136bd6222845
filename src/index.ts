import { app } from "./app";
import type { Env } from "./env";

export { RunLedger } from "./ledger/run-ledger";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
