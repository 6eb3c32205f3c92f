/** Signing in with a Dispatch token, and out. */
import { type Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { tokenDigest, type TokenAccess } from "./access";
import type { AuthFailures } from "../../auth-failures";
import type { DashboardEnv } from "../env";
import { safeNext, SIGN_IN_PATH } from "./guard";
import { type DashboardSessions, SESSION_COOKIE, SESSION_LIFETIME_MS } from "./session";

/** `GET|POST /dashboard/login` and `POST /dashboard/logout`. */
export function signInRoutes(access: TokenAccess, sessions: DashboardSessions, failures: AuthFailures) {
  return new Hono<DashboardEnv>()
    .get("/login", (c) => c.render(<SignInPage next={safeNext(c.req.query("next"))} />, SIGN_IN))
    .post("/login", async (c) => {
      failures.check(c);
      const form = c.get("form");
      const next = safeNext(form.get("next"));
      const token = form.get("token")?.trim() ?? "";
      const grant = token === "" ? null : access.grantOf(token);
      if (grant === null) {
        failures.failed(c);
        const error = token === "" ? "Enter a token." : "That is not a token of this Dispatch. Check it and try again.";
        c.status(401);
        return c.render(<SignInPage next={next} error={error} />, SIGN_IN);
      }
      const id = await sessions.start({ tokenDigest: tokenDigest(token), role: grant.access });
      setCookie(c, SESSION_COOKIE, id, cookieOptions(c, SESSION_LIFETIME_MS / 1000));
      return c.redirect(next, 303);
    })
    .post("/logout", async (c) => {
      await sessions.end(getCookie(c, SESSION_COOKIE));
      deleteCookie(c, SESSION_COOKIE, cookieOptions(c, 0));
      return c.redirect(`${SIGN_IN_PATH}?signedOut=1`, 303);
    });
}

/** HttpOnly, SameSite=Strict, for the dashboard's paths only, Secure over https. */
function cookieOptions(c: Context, maxAge: number) {
  const https = new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";
  return { httpOnly: true, sameSite: "Strict", path: "/dashboard", secure: https, maxAge } as const;
}

/** The sign-in page's head. */
const SIGN_IN = { title: "Sign in" };

/** The token field, and what went wrong with the last one. */
const SignInPage = ({ next, error }: { next: string; error?: string }) => (
  <div class="card signin">
    <h1>Sign in to Dispatch</h1>
    {error && (
      <p class="error" role="alert">
        {error}
      </p>
    )}
    <form method="post" action={SIGN_IN_PATH}>
      <input type="hidden" name="next" value={next} />
      <label for="token">Access token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" autofocus required />
      <button type="submit" class="primary">
        Sign in
      </button>
    </form>
    <p class="muted">
      Use the access token <code>npm start</code> printed (or <code>dispatch token</code> prints), or any token in{" "}
      <code>DISPATCH_TOKEN</code>. A token in <code>DISPATCH_READONLY_TOKEN</code> signs in read-only. A project's token shows
      its project; <code>DISPATCH_ADMIN_TOKEN</code> shows any project you choose.
    </p>
  </div>
);
