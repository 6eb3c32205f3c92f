/**
 * Checking that something did NOT happen without sleeping through it.
 *
 * `engineCycle` publishes a marker message due now and waits for it to
 * arrive: the engine claims due messages oldest-due first, so by then every
 * message that was due before the marker has been claimed or passed over (a
 * paused queue, a queue slot taken). `expectUntouched` and `expectHeldBack`
 * then read from the database (rows.ts) what the engine did with the
 * messages under test.
 */
import { expect } from "vitest";
import { poll } from "./poll";
import { startReceiver } from "./receiver";
import { attemptsOf, heldBackCount, messagesWhere } from "./rows";
import type { TestService } from "./service";

/**
 * Resolves once a marker message published now (due after `delay`, e.g.
 * `"1s"`, when given) has been delivered: by then every message due before it
 * has been claimed or passed over.
 */
export async function engineCycle(dispatch: TestService, delay?: string): Promise<void> {
  const marker = await startReceiver();
  try {
    const headers: Record<string, string> = delay === undefined ? {} : { "Svc-Delay": delay };
    const response = await dispatch.api(`/v2/publish/${marker.url}/marker`, { method: "POST", headers, body: "marker" });
    expect(response.status).toBe(200);
    await marker.waitFor(1);
  } finally {
    await marker.close();
  }
}

/** Asserts that the messages `ids` were neither attempted nor claimed (no attempt in flight). */
export async function expectUntouched(dispatch: TestService, ids: string[]): Promise<void> {
  expect(await attemptsOf(dispatch, ids)).toBe(0);
  const claimed = await messagesWhere(dispatch, { ids, claimed: true });
  expect(claimed).toEqual([]);
}

/**
 * Waits until flow-control admission has held the messages `ids` back —
 * parked off the work list, or due again only when their key's rate window
 * frees a slot — and checks that none of them was attempted.
 */
export async function expectHeldBack(dispatch: TestService, ids: string[]): Promise<void> {
  const held = () => heldBackCount(dispatch, ids);
  await poll(async () => (await held()) === ids.length, async () => `${ids.length} messages held back, ${await held()} are`);
  expect(await attemptsOf(dispatch, ids)).toBe(0);
}
