import type { Env as ProxyEnv } from "../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends ProxyEnv {
      ORDERS_API: Fetcher;
      PAYMENTS_API: Fetcher;
      CRM_API: Fetcher;
      EMAIL_API: Fetcher;
    }
    interface GlobalProps {
      mainModule: typeof import("../src/index");
      durableNamespaces: "RunLedger";
    }
  }
}
