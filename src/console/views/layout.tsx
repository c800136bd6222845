/** @jsxImportSource hono/jsx */
import { raw } from "hono/html";
import type { Child, FC } from "hono/jsx";
import type { EnvironmentName } from "../../envelope";
import type { ConsoleSession } from "../session";
import { STYLES } from "./styles";

export interface LayoutProps {
  title: string;
  environment: EnvironmentName;
  /** The signed-in operator, or null on the sign-in and error pages of a visitor. */
  session: ConsoleSession | null;
  /** Seconds between reloads; only the pending list sets it. */
  refreshSeconds?: number;
  children?: Child;
}

/** The page shell: landmarks, the operator's identity, sign-out, and the inline stylesheet. */
export const Layout: FC<LayoutProps> = ({ title, environment, session, refreshSeconds, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {refreshSeconds ? <meta http-equiv="refresh" content={String(refreshSeconds)} /> : null}
        <title>{`${title} · Operator console`}</title>
        <style>{raw(STYLES)}</style>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/console">
            Operator console
          </a>
          <span class={`env env-${environment}`}>{environment}</span>
          {session ? (
            <>
              <nav aria-label="Console">
                <a href="/console">Pending approvals</a>
                <a href="/console/oauth">OAuth clients</a>
              </nav>
              <div class="who">
                <span>
                  Signed in to <strong>{session.tenant}</strong> as <code>{session.operator}</code>
                </span>
                <form method="post" action="/console/sign-out">
                  <input type="hidden" name="csrf" value={session.csrf} />
                  <button type="submit">Sign out</button>
                </form>
              </div>
            </>
          ) : null}
        </header>
        <main id="main" tabindex={-1}>
          {children}
        </main>
      </body>
    </html>
  </>
);

/** A status or error box; errors are announced to screen readers as soon as the page loads. */
export const Notice: FC<{ kind: "ok" | "error" | "info"; children?: Child }> = ({ kind, children }) => (
  <div class={`notice notice-${kind}`} role={kind === "error" ? "alert" : "status"}>
    {children}
  </div>
);

/** A state, side effect or outcome as a coloured badge whose text says the same as its colour. */
export const Badge: FC<{ value: string }> = ({ value }) => (
  <span class={`badge badge-${value.replace(/[^a-z_]/g, "")}`}>{value.replaceAll("_", " ")}</span>
);
