/**
 * A destination's circuit breaker, kept in Postgres for every replica: a
 * destination that keeps failing opens it, its messages wait without spending
 * retries, a probe closes it once the destination answers, a 429 holds the
 * destination as long as it asked, and a circuit open past its bound gives
 * up, so its messages end in the DLQ saying why.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config/config";
import { cloneDatabase } from "../support/database";
import { poll } from "../support/poll";
import { receiverPool, type Responder, sleep, startReceiver } from "../support/receiver";
import { servicePool, type TestService } from "../support/service";

/** Circuits that open after 5 failures and probe after 300 ms (600 ms at most). */
const CIRCUITS: Partial<Config> = { circuitFailures: 5, circuitCoolDownMs: 300, circuitMaxCoolDownMs: 600 };

const receivers = receiverPool();
const services = servicePool();

afterEach(async () => {
  await receivers.closeAll();
  await services.stopAll();
});

const receiver = (responder?: Responder) => receivers.start(responder);
const service = (overrides: Partial<Config> = {}, databaseUrl?: string) => services.start({ ...CIRCUITS, ...overrides }, { databaseUrl });

async function publish(dispatch: TestService, url: string, headers: Record<string, string> = {}): Promise<string> {
  const response = await dispatch.api(`/v2/publish/${url}`, { method: "POST", headers, body: "x" });
  expect(response.status).toBe(200);
  return (await response.json()).messageId as string;
}

async function destination(dispatch: TestService, origin: string) {
  const response = await dispatch.api(`/v2/destinations/${origin}`);
  return response.status === 200 ? await response.json() : null;
}

async function circuitIs(dispatch: TestService, origin: string, circuit: string): Promise<void> {
  await poll(async () => (await destination(dispatch, origin))?.circuit === circuit, `the circuit of ${origin} to be ${circuit}`);
}

async function retriedCounts(dispatch: TestService, ids: string[]): Promise<Record<string, number>> {
  const rows = await dispatch.service.sql<{ id: string; retried: number }[]>`
    select id, retried from dispatch.messages where id = any(${ids}::text[]) order by id`;
  return Object.fromEntries(rows.map((row) => [row.id, row.retried]));
}

async function statesOf(dispatch: TestService, ids: string[]): Promise<string[]> {
  const rows = await dispatch.service.sql<{ state: string }[]>`select state from dispatch.messages where id = any(${ids}::text[])`;
  return rows.map((row) => row.state);
}

describe("a destination's circuit", () => {
  it("opens when it keeps failing; its messages keep their retries while open; a probe closes it and each is delivered once", async () => {
    const dispatch = await service();
    let down = true;
    const failing = await receiver(() => ({ status: down ? 503 : 200 }));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await publish(dispatch, `${failing.url}/m/${i}`, { "Svc-Retries": "10" }));
    await circuitIs(dispatch, failing.url, "OPEN");
    const opened = await destination(dispatch, failing.url);
    expect(opened.openReason).toMatch(/attempts failed in the last minute: \d+ × HTTP 503/);
    await poll(async () => (await destination(dispatch, failing.url)).inFlight === 0, "the attempts under way to end");
    const retried = await retriedCounts(dispatch, ids);
    // Two probes fail (the cool-down doubles: 300, then 600 ms): each goes back to the line, spending no retry.
    await poll(
      async () => (await dispatch.service.sql`select 1 from dispatch.attempts where note like 'the probe of%'`).length >= 2,
      "two failed probes",
    );
    const [row] = await dispatch.service.sql<{ coolDownMs: number }[]>`
      select cool_down_ms as "coolDownMs" from dispatch.destinations where destination = ${failing.url}`;
    expect(row!.coolDownMs).toBe(600);
    expect(await retriedCounts(dispatch, ids)).toEqual(retried);
    // Pending all: those the circuit held before their first attempt are still CREATED.
    for (const state of await statesOf(dispatch, ids)) expect(["CREATED", "RETRY"]).toContain(state);

    const recoveredAt = failing.requests.length;
    down = false;
    await poll(async () => (await statesOf(dispatch, ids)).every((state) => state === "DELIVERED"), "every message delivered", 15_000);
    await circuitIs(dispatch, failing.url, "CLOSED");
    const deliveredIds = failing.requests.slice(recoveredAt).map((request) => request.headers["svc-message-id"]);
    expect(deliveredIds.sort()).toEqual([...ids].sort());
  });

  it("opened by one replica, holds for another: nothing is attempted until it is closed", async () => {
    const databaseUrl = await cloneDatabase();
    // No probe within the test: the circuit stays open until it is closed by hand.
    const first = await service({ circuitCoolDownMs: 60_000, circuitMaxCoolDownMs: 60_000 }, databaseUrl);
    let down = true;
    const failing = await receiver(() => ({ status: down ? 503 : 200 }));
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await publish(first, `${failing.url}/first/${i}`, { "Svc-Retries": "10" }));
    await circuitIs(first, failing.url, "OPEN");

    const second = await service({ circuitCoolDownMs: 60_000, circuitMaxCoolDownMs: 60_000 }, databaseUrl);
    const before = failing.requests.length;
    for (let i = 0; i < 6; i++) ids.push(await publish(second, `${failing.url}/second/${i}`));
    await sleep(1500);
    expect(failing.requests.length).toBe(before);
    expect((await destination(second, failing.url)).waiting).toBeGreaterThanOrEqual(6);

    down = false;
    const closed = await second.api(`/v2/destinations/${encodeURIComponent(failing.url)}/close`, { method: "POST" });
    expect(closed.status).toBe(200);
    expect((await closed.json()).circuit).toBe("CLOSED");
    await poll(async () => (await statesOf(second, ids)).every((state) => state === "DELIVERED"), "every message delivered");
  });

  it("does not open for one message failing again and again at an otherwise healthy destination", async () => {
    const dispatch = await service();
    const target = await receiver((request) => ({ status: request.path === "/bad" ? 500 : 200 }));
    const bad = await publish(dispatch, `${target.url}/bad`, { "Svc-Retries": "15", "Svc-Retry-Delay": "10" });
    for (let i = 0; i < 5; i++) await publish(dispatch, `${target.url}/good/${i}`);
    await poll(async () => (await statesOf(dispatch, [bad]))[0] === "FAILED", "the failing message in the DLQ");
    // Its 16 failures were counted in the destination's window, and the circuit stayed closed.
    await poll(async () => (await destination(dispatch, target.url))?.failures === 16, "the 16 failures counted");
    expect((await destination(dispatch, target.url)).circuit).toBe("CLOSED");
  });

  it("a 429 with Retry-After holds the whole destination that long", async () => {
    const dispatch = await service();
    const limited = await receiver((_, index) => (index === 0 ? { status: 429, headers: { "Retry-After": "2" } } : { status: 200 }));
    await publish(dispatch, `${limited.url}/first`);
    const [refused] = await limited.waitFor(1);
    await poll(async () => (await destination(dispatch, limited.url))?.heldUntil !== null, "the hold to be recorded");
    for (let i = 0; i < 3; i++) await publish(dispatch, `${limited.url}/next/${i}`);
    const arrivals = (await limited.waitFor(5)).slice(1);
    // The first message's own retry and the three others all waited out the two seconds.
    for (const arrival of arrivals) expect(arrival.at - refused!.at).toBeGreaterThanOrEqual(1950);
  });

  it("gives up after DISPATCH_CIRCUIT_GIVE_UP_AFTER: its messages run out their retries unsent and end in the DLQ saying why", async () => {
    const dispatch = await service({ circuitCoolDownMs: 60_000, circuitMaxCoolDownMs: 60_000, circuitGiveUpAfterMs: 1500 });
    const gone = await startReceiver();
    await gone.close();
    for (let i = 0; i < 5; i++) await publish(dispatch, `${gone.url}/opener/${i}`, { "Svc-Retries": "0" });
    await circuitIs(dispatch, gone.url, "OPEN");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await publish(dispatch, `${gone.url}/held/${i}`, { "Svc-Retries": "2" }));
    // Held while the circuit is open: the attempts below (each message's three) all come after it gave up. (A look
    // at their retry counts a moment after publishing raced the give-up 1.5 s after opening on a slow machine.)
    await circuitIs(dispatch, gone.url, "GAVE_UP");
    await poll(async () => (await statesOf(dispatch, ids)).every((state) => state === "FAILED"), "every held message failed");
    const dlq = await dispatch.service.sql<{ error: string }[]>`select error from dispatch.dlq where message_id = any(${ids}::text[])`;
    expect(dlq).toHaveLength(4);
    const unreachable = new RegExp(`^not sent: destination ${gone.url} unreachable: its circuit has been open since .* \\(5 of 5 attempts failed in the last minute: 5 refused connections\\) and gave up$`);
    for (const { error } of dlq) expect(error).toMatch(unreachable);
    // Not one of their three attempts was sent, and none was made while the circuit was only open (its error would
    // not end "and gave up"): the next real attempt is a cool-down (a minute) away.
    const logged = await dispatch.service.sql<{ error: string }[]>`select error from dispatch.attempts where message_id = any(${ids}::text[])`;
    expect(logged).toHaveLength(12);
    for (const { error } of logged) expect(error).toMatch(unreachable);
  });

  it("that gave up still sends one message a cool-down, and closes when the destination answers again", async () => {
    // Its retries 200 ms apart (unscaled): one of them comes after the cool-down and is sent.
    const dispatch = await service({ circuitGiveUpAfterMs: 1000, retryDelayScale: 1 });
    let down = true;
    const flaky = await receiver(() => ({ status: down ? 503 : 200 }));
    for (let i = 0; i < 5; i++) await publish(dispatch, `${flaky.url}/opener/${i}`, { "Svc-Retries": "0" });
    await circuitIs(dispatch, flaky.url, "GAVE_UP");
    down = false;
    const id = await publish(dispatch, `${flaky.url}/after`, { "Svc-Retries": "20", "Svc-Retry-Delay": "200" });
    await circuitIs(dispatch, flaky.url, "CLOSED");
    await poll(async () => (await statesOf(dispatch, [id]))[0] === "DELIVERED", "the message delivered");
  });
});
