/** Queues: upsert, list, get, delete, pause, resume (docs/hosted-api.md §6). */
import { Hono } from "hono";
import * as v from "valibot";
import { AppError, overLimit } from "../../domain/errors";
import { checkQueueName, deleteQueue, type Queue, listQueues, setQueuePaused, upsertQueue } from "../../domain/queues/queues";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";

const QueueSchema = v.object({
  name: v.string(),
  createdAt: v.pipe(v.number(), v.description("Unix milliseconds.")),
  updatedAt: v.pipe(v.number(), v.description("Unix milliseconds.")),
  parallelism: v.pipe(v.number(), v.description("Deliveries of the queue in flight at most.")),
  lag: v.pipe(v.number(), v.description("Messages of the queue waiting for delivery.")),
  paused: v.boolean(),
});

const NAME = { name: "The queue's name." };

const UPSERT = operation({
  summary: "Create or update a queue",
  tag: "Queues",
  access: "full-token",
  body: {
    name: "queue",
    json: v.object({
      queueName: v.string("queueName is required"),
      // 0 is "not given": the Go client always sends the field (docs/hosted-api.md §6).
      parallelism: v.optional(
        v.pipe(v.number(), v.integer(), v.minValue(0, "parallelism must be at least 1"), v.transform((n) => (n === 0 ? 1 : n))),
        1,
      ),
      paused: v.optional(v.boolean("paused must be true or false"), false),
    }),
  },
  responses: { 200: "Saved." },
  errors: [412],
});
const LIST = operation({
  summary: "List queues",
  tag: "Queues",
  access: "read",
  responses: { 200: { description: "The queues.", json: v.array(QueueSchema) } },
});
const GET = operation({
  summary: "Get a queue",
  tag: "Queues",
  access: "read",
  path: NAME,
  responses: { 200: { description: "The queue.", json: QueueSchema } },
  errors: [404],
});
const DELETE = operation({
  summary: "Delete a queue",
  description: "What still waits in it is cancelled. A name no queue has changes nothing and answers 200, as every delete of a named resource does.",
  tag: "Queues",
  access: "full-token",
  path: NAME,
  responses: { 200: "Deleted (or there was none)." },
});
const PAUSE = operation({
  summary: "Pause a queue",
  description: "Its messages wait until it is resumed.",
  tag: "Queues",
  access: "full-token",
  path: NAME,
  responses: { 200: "Paused." },
  errors: [404],
});
const RESUME = operation({ summary: "Resume a queue", tag: "Queues", access: "full-token", path: NAME, responses: { 200: "Resumed." }, errors: [404] });

/** Routes of the queue resource. */
export function queueRoutes(deps: AppDeps) {
  const { sql } = deps;
  return new Hono()
    .post("/", UPSERT.describe, async (c) => {
      const { queueName, parallelism, paused } = UPSERT.body(c);
      const max = deps.config.maxQueueParallelism;
      if (parallelism > max) throw overLimit(`parallelism must be at most ${max}, got ${parallelism}`, "DISPATCH_MAX_QUEUE_PARALLELISM");
      await sql.begin((tx) => upsertQueue(tx, c.get("project"), queueName, parallelism, paused));
      return c.json({});
    })
    .get("/", LIST.describe, async (c) => c.json((await listQueues(sql, c.get("project"))).map(queueJson)))
    .get("/:name", GET.describe, async (c) => c.json(queueJson(await findQueue(deps, c.get("project"), c.req.param("name")))))
    .delete("/:name", DELETE.describe, async (c) => {
      const name = c.req.param("name");
      await sql.begin((tx) => deleteQueue(tx, c.get("project"), name));
      return c.json({});
    })
    .post("/:name/pause", PAUSE.describe, async (c) => {
      await sql.begin((tx) => setQueuePaused(tx, c.get("project"), c.req.param("name"), true));
      return c.json({});
    })
    .post("/:name/resume", RESUME.describe, async (c) => {
      await sql.begin((tx) => setQueuePaused(tx, c.get("project"), c.req.param("name"), false));
      return c.json({});
    });
}

async function findQueue(deps: AppDeps, project: string, name: string): Promise<Queue> {
  const [queue] = await listQueues(deps.sql, project, checkQueueName(name));
  if (!queue) throw new AppError(404, `queue ${name} not found`);
  return queue;
}

function queueJson(queue: Queue) {
  return {
    name: queue.name,
    createdAt: queue.createdAt.getTime(),
    updatedAt: queue.updatedAt.getTime(),
    parallelism: queue.parallelism,
    lag: queue.lag,
    paused: queue.paused,
  };
}
