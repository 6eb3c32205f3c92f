/**
 * "Retry now": a message waiting out its retry backoff is attempted at once
 * (domain/messages/retry-now.ts, as `POST /v2/messages/{id}/retry-now`). The
 * button shows on a message's page and on its workflow run's page; the
 * action goes back to the page it came from.
 */
import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { AppError } from "../../../../domain/errors";
import { type BackoffFields, retryNow, waitsOnBackoff } from "../../../../domain/messages/retry-now";
import type { AppDeps } from "../../../deps";
import { Action } from "../../kit/components";
import type { DashboardEnv, Viewer } from "../../env";
import { safeNext } from "../../session/guard";
import { doneRedirect } from "../../kit/notices";
import { messagePath } from "../../kit/params";

/** `POST /dashboard/messages/:id/retry-now`: back to the form's `back` (a dashboard path), else the message's page. */
export function retryNowRoutes(deps: AppDeps) {
  return new Hono<DashboardEnv>().post("/messages/:id/retry-now", async (c) => {
    const id = c.req.param("id");
    const result = await deps.sql.begin((tx) => retryNow(tx, c.get("project"), id));
    if (result.kind === "not-found") throw new AppError(404, `message ${id} not found`);
    const back = c.get("form").get("back");
    const to = back !== undefined && safeNext(back) === back ? back : messagePath(id);
    return doneRedirect(c, to, result.kind === "done" ? "retried-now" : "not-retried-now", id);
  });
}

/**
 * The "Retry now" button of a message that waits out its retry backoff at
 * `now`; nothing for any other message, or for a read-only viewer. `back` is
 * the page the action returns to (the message's own by default).
 */
export const RetryNow: FC<{ viewer: Viewer; message: BackoffFields & { id: string }; now: number; back?: string; label?: string }> = ({
  viewer,
  message,
  now,
  back,
  label = "Retry now",
}) =>
  waitsOnBackoff(message, now) ? (
    <Action viewer={viewer} action={`${messagePath(message.id)}/retry-now`} label={label} fields={back === undefined ? {} : { back }} />
  ) : null;
