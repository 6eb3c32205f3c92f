/**
 * Pausing and resuming a row of a list by name — a queue, a schedule, a
 * flow-control key — through the domain function that sets it, as the API's
 * pause and resume do. The form carries the list's place (`ListPlace`), and
 * the action goes back to it.
 */
import { type Context, Hono } from "hono";
import type { Sql, Tx } from "../../../db/client";
import type { DashboardEnv } from "../env";
import { doneRedirect } from "./notices";
import { linkTo, placeOf } from "./params";

/** Pauses (`paused`) or resumes the row of `project` named `name`; a 404 when there is none. */
export type SetPaused = (tx: Tx, project: string, name: string, paused: boolean) => Promise<void>;

/** `POST :<param>/pause` and `POST :<param>/resume` (mounted under the list's path), back to the list at `list`. */
export function pauseRoutes(sql: Sql, list: string, param: string, setPaused: SetPaused) {
  const action = (paused: boolean) => async (c: Context<DashboardEnv>) => {
    const name = c.req.param(param)!;
    await sql.begin((tx) => setPaused(tx, c.get("project"), name, paused));
    return doneRedirect(c, linkTo(list, placeOf(c.get("form"))), paused ? "paused" : "resumed", name);
  };
  return new Hono<DashboardEnv>().post(`/:${param}/pause`, action(true)).post(`/:${param}/resume`, action(false));
}
