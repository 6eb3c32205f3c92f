/**
 * Publishing from the dashboard: the form's fields become the request the
 * API would have been sent (request.ts), published by the API's publisher
 * (domain/publish/publish.ts); then the new message's page. Notifying a
 * workflow event is beside it (event-routes.tsx).
 */
import { type Context, Hono } from "hono";
import type { PublishResponse } from "../../../../domain/publish/prepare";
import { Publisher } from "../../../../domain/publish/publish";
import { queuePage } from "../../../../domain/queues/queues";
import { urlGroupPage } from "../../../../domain/url-groups/url-groups";
import type { AppDeps } from "../../../deps";
import { callerIp } from "../../../request";
import type { DashboardEnv } from "../../env";
import { formAction, optionalField, type Refusal, requiredField } from "../../kit/form";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { messagePath, pageParams } from "../../kit/params";
import { eventRoutes } from "./event-routes";
import { type Known, PUBLISH_PATH, PublishPage } from "./publish-page";
import { formBody, formDialect, formHeaders } from "./request";
import { publishSettings } from "../../../publish-settings";

/** How many URL group and queue names the destination fields suggest. */
const SUGGESTED = 100;

/** `GET|POST /dashboard/publish`, and the event pages under it. */
export function publishRoutes(deps: AppDeps) {
  // Made as the API's publisher is (http/routes/publish.ts).
  const publisher = new Publisher(deps.sql, publishSettings(deps), deps.localDelivery ?? null);
  const show = async (c: Context<DashboardEnv>, refusal: Refusal | null = null) => {
    const props = { viewer: c.get("viewer"), known: await known(deps, c.get("project")), dialect: deps.config.defaultDialect, refusal };
    return c.render(<PublishPage {...props} />, { title: "Publish a message", section: "publish" });
  };
  return new Hono<DashboardEnv>()
    .get("/publish", (c) => {
      pageParams(c, NOTICE_PARAMS);
      return show(c);
    })
    .post(
      "/publish",
      formAction("publish", show, async (c, form) => {
        const request = {
          destination: requiredField(form, "destination"),
          headers: formHeaders(form, formDialect(form, deps.config.defaultDialect)),
          body: formBody(form, deps.config.maxMessageBytes),
          queueName: optionalField(form, "queue"),
          callerIp: callerIp(c),
          project: c.get("project"),
        };
        const [response] = await publisher.publish([request]);
        return published(c, response!);
      }),
    )
    .route("/publish", eventRoutes(deps));
}

/** The new message's page (the first one's, for a URL group), saying what was published. */
function published(c: Context, response: PublishResponse): Response {
  const results = Array.isArray(response) ? response : [response];
  const ids = results.map((result) => result.messageId);
  const code = Array.isArray(response) ? "published-group" : results[0]!.deduplicated ? "deduplicated" : "published";
  // A URL group emptied meanwhile made no message: the publish page says so.
  const page = ids.length === 0 ? PUBLISH_PATH : messagePath(ids[0]!);
  return doneRedirect(c, page, code, ids.join(", "));
}

/** The project's first URL groups and queues by name, for the fields to suggest. */
async function known(deps: AppDeps, project: string): Promise<Known> {
  const [groups, queues] = await Promise.all([
    urlGroupPage(deps.sql, project, { cursor: null, count: SUGGESTED }),
    queuePage(deps.sql, project, { cursor: null, count: SUGGESTED }),
  ]);
  return { urlGroups: groups.items.map((group) => group.name), queues: queues.items.map((queue) => queue.name) };
}
