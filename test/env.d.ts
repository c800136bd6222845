import type { Env as ProxyEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends ProxyEnv {
      ORDERS_API: Fetcher;
      PAYMENTS_API: Fetcher;
      CRM_API: Fetcher;
      EMAIL_API: Fetcher;
      /** The sandbox upstream's store (vitest.config.ts), for tests that end an idempotency lease. */
      SANDBOX_STORE: DurableObjectNamespace<import("../sandbox/src/store").SandboxStore>;
      /** Sequences for the model-based soak (test/workerd/exactly-once.model.test.ts); unset in CI. */
      SOAK_RUNS?: string;
      /** The seed of a soak to replay; unset means a fresh one. */
      SOAK_SEED?: string;
      /** How many times its CI share each property runs in a soak (test/property-plan.ts); unset in CI. */
      SOAK_FACTOR?: string;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
      durableNamespaces: "RunLedger";
    }
  }
}
