/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { EnvironmentName } from "../../wire/envelope";
import { Layout, Notice } from "./layout";

export interface SignInPageProps {
  environment: EnvironmentName;
  csrf: string;
  error?: string;
  signedOut?: boolean;
  /** A checked local path to go to after signing in (see return-path.ts), or null for the console. */
  returnTo?: string | null;
}

export const SignInPage: FC<SignInPageProps> = ({ environment, csrf, error, signedOut, returnTo }) => (
  <Layout title="Sign in" environment={environment} session={null}>
    <div class="signin card">
      <h1>Sign in</h1>
      <p class="lede">
        Use your tenant's operator key. Tenant keys and run tokens cannot sign in: approving a call needs a
        human's key.
      </p>
      {returnTo?.startsWith("/authorize") ? (
        <Notice kind="info">
          <p>An MCP client asks for access to your tenant's tools. Sign in to review its request.</p>
        </Notice>
      ) : null}
      {signedOut ? (
        <Notice kind="ok">
          <p>You are signed out.</p>
        </Notice>
      ) : null}
      {error ? (
        <Notice kind="error">
          <p id="key-error">{error}</p>
        </Notice>
      ) : null}
      <form method="post" action="/console/sign-in">
        <input type="hidden" name="csrf" value={csrf} />
        {returnTo ? <input type="hidden" name="return_to" value={returnTo} /> : null}
        <label for="key">Operator key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="current-password"
          required
          autofocus
          aria-invalid={error ? "true" : undefined}
          aria-describedby={error ? "key-error" : undefined}
        />
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
    </div>
  </Layout>
);
