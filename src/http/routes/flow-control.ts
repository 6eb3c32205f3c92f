/** Flow control: keys, their state, pause, resume, pin, unpin, rate reset; global parallelism (docs/hosted-api.md §11). */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { AppError } from "../../domain/errors";
import { pinKey, resetKeyRate, setKeyPaused, unpinKey } from "../../domain/flow-control/admin";
import { globalParallelism } from "../../domain/flow-control/global";
import type { FlowKey } from "../../domain/flow-control/keyed";
import { type KeyState, keyStates } from "../../domain/flow-control/keys";
import { parsePin } from "../../domain/flow-control/pin";
import { parseBoolean } from "../../domain/publish/options";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";
import { type Params, singleParam } from "../query";

const KEY_INFO = v.object({
  flowControlKey: v.string(),
  waitListSize: v.pipe(v.number(), v.description("Messages held back by the key's limits.")),
  parallelismMax: v.pipe(v.number(), v.description("0 when unlimited.")),
  parallelismCount: v.pipe(v.number(), v.description("Deliveries of the key in flight.")),
  rateMax: v.pipe(v.number(), v.description("0 when unlimited.")),
  rateCount: v.pipe(v.number(), v.description("Deliveries started in the current period.")),
  ratePeriod: v.pipe(v.number(), v.description("Seconds.")),
  ratePeriodStart: v.pipe(v.number(), v.description("Unix seconds.")),
  isPaused: v.boolean(),
  isPinnedParallelism: v.boolean(),
  isPinnedRate: v.boolean(),
});
const KEY = { key: "The flow-control key." };
const DONE = "Done.";
const action = (summary: string, description: string, query?: Record<string, string>) =>
  operation({ summary, description, tag: "Flow control", access: "full-token", path: KEY, ...(query && { query }), responses: { 200: DONE }, errors: [404] });

const LIST = operation({
  summary: "List flow-control keys",
  tag: "Flow control",
  access: "read",
  query: { search: "Only keys containing this text." },
  responses: { 200: { description: "The keys with their limits and what counts against them.", json: v.array(KEY_INFO) } },
});
const GET = operation({
  summary: "Get a flow-control key",
  tag: "Flow control",
  access: "read",
  path: KEY,
  responses: { 200: { description: "The key.", json: KEY_INFO } },
  errors: [404],
});
const PAUSE = action("Pause a key", "Its messages are held back until it is resumed.");
const RESUME = action("Resume a key", "Its held-back messages start within its limits.");
const PIN = action("Pin a key's limits", "Limits given here win over those later messages give, until unpinned.", {
  parallelism: "Most deliveries in flight, at least 1.",
  rate: "Most deliveries started per period, at least 1.",
  period: "The rate's period: seconds or a duration such as `1m` (1 s to 7 days).",
});
const UNPIN = action("Unpin a key's limits", "Later messages set the unpinned limits again.", {
  parallelism: "`true` unpins the parallelism.",
  rate: "`true` unpins the rate.",
});
const RESET_RATE = action("Reset a key's rate", "Forgets the deliveries started in the current period.");
const RESET = action("Reset a key's counters", "As resetRate: the deliveries in flight are never forgotten.");
const GLOBAL = operation({
  summary: "Global parallelism",
  description: "Deliveries in flight across every worker, and how many the workers may run at once.",
  tag: "Flow control",
  access: "read",
  responses: { 200: "The figures." },
});

/** Routes mounted at `/v2`. */
export function flowControlRoutes(deps: AppDeps) {
  const { sql } = deps;
  const key = (c: Context): FlowKey => ({ project: c.get("project"), key: c.req.param("key")! });
  const act = (action: (c: Context) => Promise<void>) => async (c: Context) => {
    await action(c);
    return c.json({});
  };
  return new Hono()
    .get("/flowControl", LIST.describe, async (c) => {
      const states = await keyStates(sql, { project: c.get("project"), search: singleParam(LIST.query(c), "search") ?? "" }, false);
      return c.json(states.map(keyJson));
    })
    .get("/flowControl/:key", GET.describe, async (c) => {
      const [state] = await keyStates(sql, [key(c)], false);
      if (!state) throw new AppError(404, `flow control key ${key(c).key} not found`);
      return c.json(keyJson(state));
    })
    .post("/flowControl/:key/pause", PAUSE.describe, act((c) => sql.begin((tx) => setKeyPaused(tx, key(c), true))))
    .post("/flowControl/:key/resume", RESUME.describe, act((c) => sql.begin((tx) => setKeyPaused(tx, key(c), false))))
    .post("/flowControl/:key/pin", PIN.describe, act((c) => sql.begin((tx) => pinKey(tx, key(c), pinOf(PIN.query(c))))))
    .post(
      "/flowControl/:key/unpin",
      UNPIN.describe,
      act((c) => {
        const params = UNPIN.query(c);
        const unpin = {
          parallelism: parseBoolean(singleParam(params, "parallelism") ?? undefined, "parallelism"),
          rate: parseBoolean(singleParam(params, "rate") ?? undefined, "rate"),
        };
        return sql.begin((tx) => unpinKey(tx, key(c), unpin));
      }),
    )
    .post("/flowControl/:key/resetRate", RESET_RATE.describe, act((c) => sql.begin((tx) => resetKeyRate(tx, key(c)))))
    // `reset` (docs/hosted-api.md §11, newer) resets the counters: the parallelism count is the
    // deliveries in flight, which nothing may forget, so it resets the rate's.
    .post("/flowControl/:key/reset", RESET.describe, act((c) => sql.begin((tx) => resetKeyRate(tx, key(c)))))
    .get("/globalParallelism", GLOBAL.describe, async (c) => c.json(await globalParallelism(sql, deps.config.workerConcurrency)));
}

/** The FlowControlInfo object: limits (0 when unlimited), what counts against them, and the pins. */
function keyJson(state: KeyState) {
  const periodStart = state.window[0] ?? state.now;
  return {
    flowControlKey: state.key,
    waitListSize: state.waiting,
    parallelismMax: state.parallelism ?? 0,
    parallelismCount: state.active,
    rateMax: state.rate ?? 0,
    rateCount: state.window.length,
    ratePeriod: state.periodMs / 1000,
    ratePeriodStart: Math.floor(periodStart.getTime() / 1000),
    isPaused: state.paused,
    isPinnedParallelism: state.pinnedParallelism,
    isPinnedRate: state.pinnedRate,
  };
}

/** `?parallelism=N&rate=N&period=S` (seconds, or a duration such as `1m`), any subset (domain/flow-control/pin.ts). */
function pinOf(params: Params) {
  const [parallelism, rate, period] = (["parallelism", "rate", "period"] as const).map((name) => singleParam(params, name));
  return parsePin({ parallelism, rate, period });
}
