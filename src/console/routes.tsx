/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { decide, showApproval, showPending } from "./approval-pages";
import type { ConsoleEnv } from "./console-env";
import { environmentOf, limitForm, requireCsrf, requireSession } from "./guards";
import { showRun } from "./run-pages";
import { showSignIn, signIn, signOut } from "./sign-in";
import { MessagePage } from "./views/message-page";

/**
 * The operator console, mounted at `/console`: server-rendered HTML for people, beside the JSON
 * operator API for programs. Both act through src/approvals/operator.ts.
 */
export const operatorConsole = new Hono<ConsoleEnv>();

/**
 * The pages load nothing from anywhere (styles are inline, there is no script), so the policy
 * forbids every fetch; forms may only post back here, and no other site may frame a page with an
 * approve button on it. Pages show live approvals and are never cached.
 */
operatorConsole.use(async (c, next) => {
  c.header(
    "Content-Security-Policy",
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  c.header("X-Frame-Options", "DENY");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
  c.header("Cache-Control", "no-store");
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
