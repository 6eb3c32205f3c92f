/** Queues by name, 50 a page; create (or change parallelism), pause, resume, delete (domain/queues/queues.ts), as the API's. */
import { type Context, Hono } from "hono";
import { badRequest } from "../../../../domain/errors";
import { checkQueueName, checkQueueParallelism, deleteQueue, listQueues, queuePage, setQueuePaused, upsertQueue } from "../../../../domain/queues/queues";
import type { AppDeps } from "../../../deps";
import { singleParam } from "../../../query";
import { BY_NAME_PAGE_SIZE } from "../../kit/components";
import type { DashboardEnv } from "../../env";
import { formAction, optionalField, type Refusal, requiredField } from "../../kit/form";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { nowOf } from "../../kit/page";
import { linkTo, pageParams, placeOf } from "../../kit/params";
import { pauseRoutes } from "../../kit/pause";
import { QUEUES_PATH, QueuesPage } from "./queues-page";

/** `GET|POST /dashboard/queues`, `POST /dashboard/queues/:name/pause|resume|delete`. */
export function queueRoutes(deps: AppDeps) {
  const show = async (c: Context<DashboardEnv>, after: string | null, refusal: Refusal | null = null) => {
    const page = await queuePage(deps.sql, c.get("project"), { cursor: after, count: BY_NAME_PAGE_SIZE });
    const props = { page, after, now: nowOf(deps), viewer: c.get("viewer"), refusal };
    return c.render(<QueuesPage {...props} />, { title: "Queues", section: "queues" });
  };
  return new Hono<DashboardEnv>()
    .get("/queues", (c) => show(c, singleParam(pageParams(c, ["after", ...NOTICE_PARAMS]), "after")))
    .post(
      "/queues",
      formAction("create-queue", (c, refusal) => show(c, null, refusal), async (c, form) => {
        const name = checkQueueName(requiredField(form, "name", "the queue name"));
        const parallelism = checkQueueParallelism(wholeNumber(optionalField(form, "parallelism") ?? "1"), deps.config.maxQueueParallelism);
        await deps.sql.begin(async (tx) => {
          // Saving an existing queue changes its parallelism, not whether it is paused.
          const [existing] = await listQueues(tx, c.get("project"), name);
          await upsertQueue(tx, c.get("project"), name, parallelism, existing?.paused ?? false);
        });
        return doneRedirect(c, QUEUES_PATH, "queue-saved", name);
      }),
    )
    .post("/queues/:name/delete", async (c) => {
      const name = c.req.param("name");
      await deps.sql.begin((tx) => deleteQueue(tx, c.get("project"), name));
      return doneRedirect(c, linkTo(QUEUES_PATH, placeOf(c.get("form"))), "queue-deleted", name);
    })
    .route("/queues", pauseRoutes(deps.sql, QUEUES_PATH, "name", setQueuePaused));
}

/** A whole number typed in a field, else a 400. */
function wholeNumber(text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`parallelism must be a whole number, got "${text}"`);
  return Number(text);
}
