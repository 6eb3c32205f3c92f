/** Flow control: keys, their state, pause, resume, pin, unpin, rate reset; global parallelism (docs/hosted-api.md §11). */
import { type Context, Hono } from "hono";
import { parseDuration } from "../../domain/duration";
import { AppError, badRequest } from "../../domain/errors";
import { pinKey, resetKeyRate, setKeyPaused, unpinKey } from "../../domain/flow-control/admin";
import { globalParallelism } from "../../domain/flow-control/global";
import { type KeyState, keyStates } from "../../domain/flow-control/keys";
import { parseBoolean } from "../../domain/publish/options";
import type { AppDeps } from "../deps";

/** Routes mounted at `/v2`. */
export function flowControlRoutes(deps: AppDeps) {
  const { sql } = deps;
  const key = (c: Context) => c.req.param("key")!;
  const act = (action: (c: Context) => Promise<void>) => async (c: Context) => {
    await action(c);
    return c.json({});
  };
  return new Hono()
    .get("/flowControl", async (c) => {
      const states = await keyStates(sql, { search: c.req.query("search") ?? "" }, false);
      return c.json(states.map(keyJson));
    })
    .get("/flowControl/:key", async (c) => {
      const [state] = await keyStates(sql, [key(c)], false);
      if (!state) throw new AppError(404, `flow control key ${key(c)} not found`);
      return c.json(keyJson(state));
    })
    .post("/flowControl/:key/pause", act((c) => sql.begin((tx) => setKeyPaused(tx, key(c), true))))
    .post("/flowControl/:key/resume", act((c) => sql.begin((tx) => setKeyPaused(tx, key(c), false))))
    .post("/flowControl/:key/pin", act((c) => sql.begin((tx) => pinKey(tx, key(c), pinOf(c)))))
    .post(
      "/flowControl/:key/unpin",
      act((c) => {
        const unpin = {
          parallelism: parseBoolean(c.req.query("parallelism"), "parallelism"),
          rate: parseBoolean(c.req.query("rate"), "rate"),
        };
        return sql.begin((tx) => unpinKey(tx, key(c), unpin));
      }),
    )
    .post("/flowControl/:key/resetRate", act((c) => sql.begin((tx) => resetKeyRate(tx, key(c)))))
    // `reset` (docs/hosted-api.md §11, newer) resets the counters: the parallelism count is the
    // deliveries in flight, which nothing may forget, so it resets the rate's.
    .post("/flowControl/:key/reset", act((c) => sql.begin((tx) => resetKeyRate(tx, key(c)))))
    .get("/globalParallelism", async (c) => c.json(await globalParallelism(sql, deps.config.workerConcurrency)));
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

/** `?parallelism=N&rate=N&period=S` (seconds, or a duration such as `1m`), any subset. */
function pinOf(c: Context) {
  const positive = (name: string) => {
    const text = c.req.query(name);
    if (text === undefined || text === "") return undefined;
    if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw badRequest(`${name} must be a whole number of at least 1, got "${text}"`);
    return Number(text);
  };
  const period = c.req.query("period");
  const periodMs = period === undefined || period === "" ? undefined : parseDuration(period);
  if (periodMs === null || (periodMs !== undefined && (periodMs < 1000 || periodMs > 7 * 86_400_000))) {
    throw badRequest(`period must be from 1 to 604800 seconds, got "${period}"`);
  }
  return { parallelism: positive("parallelism"), rate: positive("rate"), periodMs };
}
