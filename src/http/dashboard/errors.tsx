/**
 * Errors on dashboard pages: the API's error (its status and message, already
 * rendered and logged by `renderError` in http/server/errors.ts) shown as a page.
 */
import type { Context } from "hono";
import { type Frame, Layout } from "./layout";

/** The JSON error `rendered` as an HTML page with the same status (and `Retry-After`). */
export async function dashboardErrorPage(rendered: Response, c: Context, frame: Frame): Promise<Response> {
  const { error: message } = (await rendered.json()) as { error: string };
  const retryAfter = rendered.headers.get("retry-after");
  if (retryAfter) c.header("Retry-After", retryAfter);
  return errorPage(c, frame, rendered.status, message);
}

/** A page saying what went wrong, with a way back. */
export function errorPage(c: Context, frame: Frame, status: number, message: string): Response | Promise<Response> {
  return c.html(
    <Layout frame={frame} title={`Error ${status}`}>
      <div class="card">
        <h1>{status === 404 ? "Not found" : status === 403 ? "Not allowed" : `Error ${status}`}</h1>
        <p class="error" role="alert">
          {message}
        </p>
        <p>
          <a href="/dashboard">Back to the overview</a>
        </p>
      </div>
    </Layout>,
    status as 400,
  );
}
