/** @jsxImportSource hono/jsx */
import { raw } from "hono/html";
import type { Child, FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import type { EnvironmentName } from "../../wire/envelope";
import { LIVE_SCRIPT_PATH } from "../live-script";
import { STYLES } from "./styles";

export interface LayoutProps {
  title: string;
  environment: EnvironmentName;
  /** The signed-in operator, or null on the sign-in and error pages of a visitor. */
  session: SignedInOperator | null;
  /** The console section the page belongs to, marked in the navigation. */
  section?: ConsoleSection;
  /** Set when the page has live regions (`data-live`): loads the script that refreshes them. */
  live?: boolean;
  children?: Child;
}

export type ConsoleSection = "pending" | "approvals" | "runs" | "audit" | "health" | "oauth";

const SECTIONS: ReadonlyArray<{ section: ConsoleSection; href: string; label: string }> = [
  { section: "pending", href: "/console", label: "Waiting for you" },
  { section: "approvals", href: "/console/approvals", label: "Approval history" },
  { section: "runs", href: "/console/runs", label: "Runs" },
  { section: "audit", href: "/console/audit", label: "Audit" },
  { section: "health", href: "/console/health", label: "Agent health" },
  { section: "oauth", href: "/console/oauth", label: "OAuth clients" },
];

/**
 * The page shell: landmarks, the operator's identity, sign-out, and the inline stylesheet. The only
 * script is the console's own live-update file, on pages that ask for it; nothing runs inline.
 */
export const Layout: FC<LayoutProps> = ({ title, environment, session, section, live, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Operator console`}</title>
        <style>{raw(STYLES)}</style>
        {live ? <script src={LIVE_SCRIPT_PATH} defer /> : null}
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
                {SECTIONS.map((item) => (
                  <a href={item.href} aria-current={item.section === section ? "page" : undefined}>
                    {item.label}
                  </a>
                ))}
              </nav>
              <div class="who">
                <span>
                  Signed in to <strong>{session.tenant}</strong> as{" "}
                  {session.name ? <strong>{session.name}</strong> : <code>{session.operator}</code>}
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

/**
 * A state, side effect or outcome as a coloured badge whose text says the same as its colour: the
 * value's words, or `label` when they would not say it; `title` explains it on hover.
 */
export const Badge: FC<{ value: string; label?: string; title?: string | undefined }> = ({
  value,
  label,
  title,
}) => (
  <span class={`badge badge-${value.replace(/[^a-z_]/g, "")}`} title={title}>
    {label ?? value.replaceAll("_", " ")}
  </span>
);
