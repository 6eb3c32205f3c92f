/**
 * Runs `promoteDueMessages` about once a second in every worker process, so
 * attempts beyond the engine horizon get their jobs well before they are due.
 */
import type { Sql } from "../db/client";
import { promoteDueMessages } from "../domain/delivery/schedule";

const INTERVAL_MS = 1000;
const BATCH = 5000;

/** Starts the promoter; the returned function stops it. */
export function startPromoter(sql: Sql, onError: (error: unknown) => void): () => Promise<void> {
  let running: Promise<void> = Promise.resolve();
  const tick = async () => {
    while ((await sql.begin((tx) => promoteDueMessages(tx, BATCH))) === BATCH);
  };
  const timer = setInterval(() => {
    running = running.then(tick).catch(onError);
  }, INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
