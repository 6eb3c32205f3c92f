/**
 * What an operator does to a flow-control key (docs/hosted-api.md §11):
 * pause and resume it, pin and unpin its limits, reset its rate window.
 * Whatever lets more start releases the held-back messages at once.
 */
import { dueNowAfterChange } from "../../db/queries/flow-control-holds";
import type { Tx } from "../../db/client";
import { AppError, badRequest } from "../errors";
import type { FlowKey } from "./keyed";
import type { FlowControlLimits } from "./limits";
import { releaseParked } from "./release";

/** Pauses a key (its messages wait, its rate period keeps elapsing) or resumes it. */
export async function setKeyPaused(tx: Tx, key: FlowKey, paused: boolean): Promise<void> {
  await updateKey(tx, key, tx`paused = ${paused}`);
  if (!paused) await releaseChanged(tx, key);
}

/**
 * After a key's limits changed (resume, pin, rate reset): the message waiting
 * for its rate window is due now instead, and the held ones the new limits
 * allow are released.
 */
async function releaseChanged(tx: Tx, key: FlowKey): Promise<void> {
  await dueNowAfterChange(tx, key);
  await releaseParked(tx, [key]);
}

/** Pins some limits (incoming messages no longer change them) and restarts the rate window. */
export async function pinKey(tx: Tx, key: FlowKey, pin: Partial<FlowControlLimits>): Promise<void> {
  if (pin.parallelism === undefined && pin.rate === undefined && pin.periodMs === undefined) {
    throw badRequest("pin needs parallelism, rate or period");
  }
  const byRate = pin.rate !== undefined || pin.periodMs !== undefined;
  await updateKey(
    tx,
    key,
    tx`parallelism = coalesce(${pin.parallelism ?? null}::int, parallelism),
      pinned_parallelism = pinned_parallelism or ${pin.parallelism !== undefined},
      rate = coalesce(${pin.rate ?? null}::int, rate), period_ms = coalesce(${pin.periodMs ?? null}::int, period_ms),
      pinned_rate = pinned_rate or ${byRate}, starts = '{}'`,
  );
  await releaseChanged(tx, key);
}

/** Unpins limits: they stay as they are until a message brings others. */
export async function unpinKey(tx: Tx, key: FlowKey, unpin: { parallelism: boolean; rate: boolean }): Promise<void> {
  await updateKey(
    tx,
    key,
    tx`pinned_parallelism = pinned_parallelism and not ${unpin.parallelism}, pinned_rate = pinned_rate and not ${unpin.rate}`,
  );
}

/** Forgets the rate window's starts: the period begins again now. */
export async function resetKeyRate(tx: Tx, key: FlowKey): Promise<void> {
  await updateKey(tx, key, tx`starts = '{}'`);
  await releaseChanged(tx, key);
}

async function updateKey(tx: Tx, key: FlowKey, set: ReturnType<Tx>): Promise<void> {
  const [row] = await tx`update dispatch.flow_control_keys set ${set}, updated_at = now()
    where project = ${key.project} and key = ${key.key} returning key`;
  if (!row) throw new AppError(404, `flow control key ${key.key} not found`);
}
