import type { SandboxEnv } from "./env";
import { app } from "./routes";

export { SandboxStore } from "./store";

export default {
  fetch: (request, env, ctx) => app.fetch(request, env, ctx),
} satisfies ExportedHandler<SandboxEnv>;
