/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { decide, showApproval } from "./approval-pages";
import { exportAudit, showAudit, showReceipt } from "./audit-pages";
import type { ConsoleEnv } from "./console-env";
import { disconnectClient, revokeGrant, showGrants } from "./grant-pages";
import { limitForm, messagePage, requireCsrf, requireSession } from "./guards";
import { showHealth } from "./health-pages";
import { showHistory } from "./history-pages";
import { LIVE_SCRIPT_PATH, serveLiveScript } from "./live-script";
import { pendingFragment, showPending } from "./pending-pages";
import { revealInvisibleCharacters } from "./reveal-invisibles";
import { runsFragment, showRuns } from "./run-list-pages";
import { showRun } from "./run-pages";
import { consoleSecurityHeaders } from "./security-headers";
import { showSignIn, signIn, signOut } from "./sign-in";

/**
 * The operator console, mounted at `/console`: server-rendered HTML for people, beside the JSON
 * operator API for programs. Both act through src/ledger/operator-client.ts.
 */
export const operatorConsole = new Hono<ConsoleEnv>();

operatorConsole.use(consoleSecurityHeaders);
operatorConsole.use(revealInvisibleCharacters);

operatorConsole.get("/sign-in", showSignIn);
operatorConsole.post("/sign-in", limitForm, signIn);
operatorConsole.post("/sign-out", requireSession, limitForm, requireCsrf, signOut);

// The console's one script: the same for everyone, so no session is needed to fetch it.
operatorConsole.get(LIVE_SCRIPT_PATH.replace("/console", ""), serveLiveScript);

operatorConsole.get("/", requireSession, showPending);
operatorConsole.get("/fragments/pending", requireSession, pendingFragment);
operatorConsole.get("/approvals", requireSession, showHistory);
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
operatorConsole.get("/runs", requireSession, showRuns);
operatorConsole.get("/fragments/runs", requireSession, runsFragment);
operatorConsole.get("/runs/:run_id", requireSession, showRun);
operatorConsole.get("/audit", requireSession, showAudit);
operatorConsole.get("/audit/export", requireSession, exportAudit);
operatorConsole.get("/audit/:seq", requireSession, showReceipt);
operatorConsole.get("/health", requireSession, showHealth);

operatorConsole.get("/oauth", requireSession, showGrants);
operatorConsole.post("/oauth/grants/:id/revoke", requireSession, limitForm, requireCsrf, revokeGrant);
operatorConsole.post("/oauth/clients/:id/revoke", requireSession, limitForm, requireCsrf, disconnectClient);

operatorConsole.all("*", (c) =>
  messagePage(c, 404, "Page not found", "The console has no such page.", { anonymous: true }),
);

operatorConsole.onError((error, c) => {
  console.error("console page failed", error);
  return messagePage(
    c,
    500,
    "Something went wrong",
    "The console could not complete this request. Try again shortly; if it keeps failing, the proxy's log says why.",
    { anonymous: true },
  );
});
