/**
 * Messages: the list, filtered and newest first (domain/messages/list.ts), a
 * message's page, and cancel (domain/messages/cancel.ts), as the API's.
 */
import { redactorFor } from "../../../redactor-for";
import { Hono } from "hono";
import { AppError, badRequest } from "../../../../domain/errors";
import { retryLinks } from "../../../../domain/dlq/retry-links";
import { listAttempts, messageRelations } from "../../../../domain/messages/attempts";
import { holdOf } from "../../../../domain/messages/hold";
import { cancelMessages } from "../../../../domain/messages/cancel";
import { MESSAGE_STATES, type MessageState } from "../../../../db/vocabulary";
import { listMessages } from "../../../../domain/messages/list";
import { findOwnMessage } from "../../../../domain/messages/message";
import type { AppDeps } from "../../../deps";
import { type Params, singleParam } from "../../../query";
import type { DashboardEnv } from "../../env";
import { messageListFilter } from "../../kit/filters";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { currentUrl, nowOf } from "../../kit/page";
import { bodyViewParam, messagePath, pageParams } from "../../kit/params";
import { backLink, backPath } from "./back";
import { MessagePage, messageTitle } from "./message-page";
import { MESSAGE_FILTERS, MessagesPage } from "./messages-page";
import { retryNowRoutes } from "./retry-now";

const PAGE_SIZE = 50;

/** `GET /dashboard/messages`, `GET /dashboard/messages/:id` and `POST /dashboard/messages/:id/cancel`. */
export function messageRoutes(deps: AppDeps) {
  return new Hono<DashboardEnv>()
    .route("/", retryNowRoutes(deps))
    .get("/messages", async (c) => {
      const params = pageParams(c, [...MESSAGE_FILTERS, "cursor", ...NOTICE_PARAMS]);
      const [now, cursor, states] = [nowOf(deps), singleParam(params, "cursor"), stateParam(params)];
      const { values, filter, range } = messageListFilter(params, MESSAGE_FILTERS, now);
      const page = await listMessages(deps.sql, { project: c.get("project"), states, filter, range, cursor, count: PAGE_SIZE });
      const props = { page, values, cursor, now, self: currentUrl(c) };
      return c.render(<MessagesPage {...props} />, { title: "Messages", section: "messages" });
    })
    .get("/messages/:id", async (c) => {
      const params = pageParams(c, ["body", "back", ...NOTICE_PARAMS]);
      const [view, back] = [bodyViewParam(params), backPath(c, params)];
      const read = await readMessage(deps, c.get("project"), c.req.param("id"));
      const message = redactorFor(c, deps.redactor).message(read.message);
      const props = { ...read, message, view, back, now: nowOf(deps), viewer: c.get("viewer"), self: currentUrl(c) };
      return c.render(<MessagePage {...props} />, { title: messageTitle(message), section: "messages", back: backLink(back) });
    })
    .post("/messages/:id/cancel", async (c) => {
      const id = c.req.param("id");
      const cancelled = await deps.sql.begin(async (tx) => {
        if (!(await findOwnMessage(tx, c.get("project"), id))) throw new AppError(404, `message ${id} not found`);
        return cancelMessages(tx, c.get("project"), [id]);
      });
      return doneRedirect(c, messagePath(id), cancelled > 0 ? "cancelled" : "not-cancelled", id);
    });
}

/** The message `id`, its attempts, what names it and what holds it, in one snapshot; a 404 when there is no such message. */
async function readMessage(deps: AppDeps, project: string, id: string) {
  const found = await deps.sql.begin("isolation level repeatable read read only", async (tx) => {
    const message = await findOwnMessage(tx, project, id);
    if (!message) return null;
    return {
      message,
      attempts: await listAttempts(tx, id),
      relations: await messageRelations(tx, message),
      links: await retryLinks(tx, message),
      hold: await holdOf(tx, message),
    };
  });
  if (!found) throw new AppError(404, `message ${id} not found`);
  return found;
}

/** The `state` filter: one state, in any case. */
function stateParam(params: Params): MessageState[] | null {
  const text = singleParam(params, "state");
  if (text === null) return null;
  const upper = text.toUpperCase();
  if (!(MESSAGE_STATES as readonly string[]).includes(upper)) {
    throw badRequest(`state must be one of ${MESSAGE_STATES.join(", ")}, got "${text}"`);
  }
  return [upper as MessageState];
}
