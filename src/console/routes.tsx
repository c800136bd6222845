/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { decide, showApproval, showPending } from "./approval-pages";
import type { ConsoleEnv } from "./console-env";
import { disconnectClient, revokeGrant, showGrants } from "./grant-pages";
import { environmentOf, limitForm, requireCsrf, requireSession } from "./guards";
import { showRun } from "./run-pages";
import { setConsoleHeaders } from "./security-headers";
import { showSignIn, signIn, signOut } from "./sign-in";
import { MessagePage } from "./views/message-page";

/**
 * The operator console, mounted at `/console`: server-rendered HTML for people, beside the JSON
 * operator API for programs. Both act through src/approvals/operator.ts.
 */
export const operatorConsole = new Hono<ConsoleEnv>();

operatorConsole.use(async (c, next) => {
  setConsoleHeaders(c);
  await next();
});

operatorConsole.get("/sign-in", showSignIn);
operatorConsole.post("/sign-in", limitForm, signIn);
operatorConsole.post("/sign-out", requireSession, limitForm, requireCsrf, signOut);

operatorConsole.get("/", requireSession, showPending);
operatorConsole.get("/approvals/:id", requireSession, showApproval);
for (const decision of ["approve", "reject"] as const) {
  operatorConsole.post(
    `/approvals/:id/${decision}`,
    requireSession,
    limitForm,
    requireCsrf,
    decide(decision),
  );
}
operatorConsole.get("/runs/:run_id", requireSession, showRun);

operatorConsole.get("/oauth", requireSession, showGrants);
operatorConsole.post("/oauth/grants/:id/revoke", requireSession, limitForm, requireCsrf, revokeGrant);
operatorConsole.post("/oauth/clients/:id/revoke", requireSession, limitForm, requireCsrf, disconnectClient);

operatorConsole.all("*", (c) =>
  c.html(
    <MessagePage
      environment={environmentOf(c)}
      session={null}
      title="Page not found"
      message="The console has no such page."
    />,
    404,
  ),
);

operatorConsole.onError((error, c) => {
  console.error("console page failed", error);
  return c.html(
    <MessagePage
      environment={environmentOf(c)}
      session={null}
      title="Something went wrong"
      message="The console could not complete this request. Try again shortly; if it keeps failing, the proxy's log says why."
    />,
    500,
  );
});
