/**
 * The official SDK's `client.schedules` against Dispatch: create (with the
 * options it sends as Upstash-* headers), get, list, pause, resume, delete;
 * and the messages a tick makes carry the schedule's id into the DLQ.
 */
import { Client } from "@upstash/qstash";
import { beforeAll, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { TEST_TOKEN, useDispatch } from "../support/service";

const clock = new TestClock();
const dispatch = useDispatch({}, { now: clock.now });
const receiver = useReceiver((request) => (request.path === "/failing" ? { status: 500, body: "no" } : { status: 200 }));
let client: Client;

beforeAll(async () => {
  // devMode: false keeps the SDK from looking for (or downloading) its local dev server.
  client = new Client({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, devMode: false, retry: false });
});

/** Moves the clock past the schedule's next tick and waits for it to fire. */
async function passNextTick(scheduleId: string) {
  const before = await client.schedules.get(scheduleId);
  await clock.moveTo(dispatch, before.nextScheduleTime! + 5);
  return poll(async () => {
    const after = await client.schedules.get(scheduleId);
    return after.lastScheduleTime === before.nextScheduleTime && after;
  }, `schedule ${scheduleId} to fire`);
}

describe("client.schedules", () => {
  it("create, get, list, pause, resume and delete", async () => {
    const { scheduleId } = await client.schedules.create({
      destination: `${receiver.url}/sdk`,
      cron: "CRON_TZ=Europe/Berlin */5 * * * *",
      body: JSON.stringify({ hello: "schedule" }),
      method: "PATCH",
      retries: 1,
      delay: 10,
      timeout: "20s",
      retryDelay: "1000 * retried",
      headers: { "X-From": "sdk" },
      flowControl: { key: "sdk-key", parallelism: 2, rate: 10, period: "1m" },
      label: "sdk-label",
      scheduleId: "sdk-schedule",
      queueName: "sdk-schedule-queue",
    });
    expect(scheduleId).toBe("sdk-schedule");
    const schedule = await client.schedules.get(scheduleId);
    expect(schedule).toMatchObject({
      scheduleId,
      cron: "CRON_TZ=Europe/Berlin */5 * * * *",
      destination: `${receiver.url}/sdk`,
      method: "PATCH",
      retries: 1,
      delay: 10,
      timeout: 20,
      retryDelayExpression: "1000 * retried",
      header: { "X-From": ["sdk"], "Content-Type": ["application/json"] },
      body: '{"hello":"schedule"}',
      isPaused: false,
      queueName: "sdk-schedule-queue",
      flowControlKey: "sdk-key",
      parallelism: 2,
      rate: 10,
      period: 60,
      label: "sdk-label",
      labels: ["sdk-label"],
    });
    expect(schedule.nextScheduleTime! % 300_000).toBe(0);
    expect((await client.schedules.list()).map((s) => s.scheduleId)).toContain(scheduleId);

    await client.schedules.pause({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(true);
    await client.schedules.resume({ schedule: scheduleId });
    expect((await client.schedules.get(scheduleId)).isPaused).toBe(false);

    await client.schedules.delete(scheduleId);
    await expect(client.schedules.get(scheduleId)).rejects.toMatchObject({ status: 404 });
    expect((await client.schedules.list()).map((s) => s.scheduleId)).not.toContain(scheduleId);
  });

  it("a tick's failed message lands in the DLQ with the schedule's id, and filters find it", async () => {
    const { scheduleId } = await client.schedules.create({
      destination: `${receiver.url}/failing`,
      cron: "* * * * *",
      retries: 0,
      body: "tick",
    });
    const fired = await passNextTick(scheduleId);
    const [messageId] = Object.keys(fired.lastScheduleStates ?? {});
    expect(messageId).toMatch(/^msg_/);
    const dlq = await poll(async () => {
      const { messages } = await client.dlq.listMessages({ filter: { scheduleId } });
      return messages.length > 0 && messages;
    }, "the failed tick in the DLQ");
    expect(dlq).toHaveLength(1);
    expect(dlq[0]).toMatchObject({ messageId, scheduleId, responseStatus: 500 });
    const got = receiver.requests.find((request) => request.path === "/failing")!;
    expect(got.headers["upstash-schedule-id"]).toBe(scheduleId);
    expect((await client.schedules.get(scheduleId)).lastScheduleStates).toEqual({ [messageId!]: "FAIL" });
    const { logs } = await client.logs({ filter: { scheduleId } });
    expect(new Set(logs.map((log) => log.messageId))).toEqual(new Set([messageId]));
    expect(logs.map((log) => log.state)).toContain("FAILED");
  });
});
