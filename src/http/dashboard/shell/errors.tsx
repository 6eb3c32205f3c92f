/**
 * Errors on dashboard pages: the API's error (its status and message, already
 * rendered and logged by `renderError` in http/server/errors.ts) shown as a
 * page in the layout, with the navigation when someone is signed in and a
 * way back to the page the request came from. A form the domain refuses does
 * not come here: its page shows the error beside it (form.ts `formAction`).
 */
import type { Context } from "hono";
import type { DashboardEnv } from "../env";
import { type Frame, Layout } from "./layout";

/** The JSON error `rendered` as an HTML page with the same status (and `Retry-After`). */
export async function dashboardErrorPage(rendered: Response, c: Context, frame: Frame): Promise<Response> {
  const { error: message } = (await rendered.json()) as { error: string };
  const retryAfter = rendered.headers.get("retry-after");
  if (retryAfter) c.header("Retry-After", retryAfter);
  return errorPage(c, frame, rendered.status, message);
}

/** A page saying what went wrong, framed for whoever is signed in, with a way back. */
export function errorPage(c: Context, frame: Frame, status: number, message: string): Response | Promise<Response> {
  // Set once the session is checked (guard.ts): an error before that, or without a session, has no navigation.
  const viewer = (c as Context<DashboardEnv>).get("viewer") ?? frame.viewer;
  const back = cameFrom(c);
  return c.html(
    <Layout frame={{ ...frame, viewer }} title={`Error ${status}`}>
      <div class="card">
        <h1>{status === 404 ? "Not found" : status === 403 ? "Not allowed" : `Error ${status}`}</h1>
        <p class="error" role="alert">
          {message}
        </p>
        <p class="actions">
          {back !== null && <a href={back}>← Back to the page you came from</a>}
          <a href="/dashboard">Overview</a>
        </p>
      </div>
    </Layout>,
    status as 400,
  );
}

/** The dashboard page that linked or posted here (the Referer, same origin), unless it is this one. */
function cameFrom(c: Context): string | null {
  const referer = c.req.header("referer");
  if (referer === undefined) return null;
  try {
    const [from, here] = [new URL(referer), new URL(c.req.url)];
    if (from.host !== here.host || !/^\/dashboard(\/|$)/.test(from.pathname)) return null;
    const path = from.pathname + from.search;
    return path === here.pathname + here.search ? null : path;
  } catch {
    return null;
  }
}
