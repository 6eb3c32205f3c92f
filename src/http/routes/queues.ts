/** Queues: upsert, list, get, delete, pause, resume (docs/hosted-api.md §6). */
import { Hono } from "hono";
import * as v from "valibot";
import { AppError, badRequest, overLimit } from "../../domain/errors";
import { checkQueueName, deleteQueue, type Queue, listQueues, setQueuePaused, upsertQueue } from "../../domain/queues/queues";
import { jsonOf } from "../body";
import type { AppDeps } from "../deps";

const UpsertSchema = v.object({
  queueName: v.string("queueName is required"),
  parallelism: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1, "parallelism must be at least 1")), 1),
  paused: v.optional(v.boolean("paused must be true or false"), false),
});

/** Routes of the queue resource. */
export function queueRoutes(deps: AppDeps) {
  const { sql } = deps;
  return new Hono()
    .post("/", async (c) => {
      const body = v.safeParse(UpsertSchema, jsonOf(c));
      if (!body.success) throw badRequest(`invalid queue: ${body.issues[0]!.message}`);
      const { queueName, parallelism, paused } = body.output;
      const max = deps.config.maxQueueParallelism;
      if (parallelism > max) throw overLimit(`parallelism must be at most ${max}, got ${parallelism}`, "DISPATCH_MAX_QUEUE_PARALLELISM");
      await sql.begin((tx) => upsertQueue(tx, queueName, parallelism, paused));
      return c.json({});
    })
    .get("/", async (c) => c.json((await listQueues(sql)).map(queueJson)))
    .get("/:name", async (c) => c.json(queueJson(await findQueue(deps, c.req.param("name")))))
    .delete("/:name", async (c) => {
      const name = c.req.param("name");
      await sql.begin((tx) => deleteQueue(tx, name));
      return c.json({});
    })
    .post("/:name/pause", async (c) => {
      await sql.begin((tx) => setQueuePaused(tx, c.req.param("name"), true));
      return c.json({});
    })
    .post("/:name/resume", async (c) => {
      await sql.begin((tx) => setQueuePaused(tx, c.req.param("name"), false));
      return c.json({});
    });
}

async function findQueue(deps: AppDeps, name: string): Promise<Queue> {
  const [queue] = await listQueues(deps.sql, checkQueueName(name));
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
