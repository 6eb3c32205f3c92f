/**
 * Schedules in the native dialect: create, read, replace, pause, resume and
 * delete; each tick fires once and publishes the stored request with the
 * schedule's id. The service's schedules fire by a clock the test moves on,
 * so a minute's tick takes no real minute.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TestClock } from "../support/clock";
import { poll } from "../support/poll";
import { engineCycle } from "../support/engine";
import { useReceiver } from "../support/receiver";
import { startDispatchProcess } from "../support/processes";
import { countMessages, messagesWhere, storedSchedules } from "../support/rows";
import { startTestService, TEST_TOKEN, useDispatch } from "../support/service";

const clock = new TestClock();
const { now } = clock;
const dispatch = useDispatch({}, { now });
const receiver = useReceiver();

afterEach(() => {
  receiver.requests.length = 0;
});

interface ScheduleJson {
  scheduleId: string;
  cron: string;
  destination: string;
  nextScheduleTime: number;
  lastScheduleTime?: number;
  lastScheduleStates?: Record<string, string>;
  isPaused: boolean;
  [field: string]: unknown;
}

const create = (destination: string, headers: Record<string, string>, body?: string) =>
  dispatch.api(`/v2/schedules/${destination}`, { method: "POST", headers, body });

async function createOk(destination: string, headers: Record<string, string>, body?: string): Promise<string> {
  const response = await create(destination, headers, body);
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json.scheduleId;
}

const getSchedule = async (id: string) => (await (await dispatch.api(`/v2/schedules/${id}`)).json()) as ScheduleJson;

/** Moves the clock to just past the schedule's next tick and waits until that tick has fired. */
async function passNextTick(id: string): Promise<ScheduleJson> {
  const before = await getSchedule(id);
  await clock.moveTo(dispatch, before.nextScheduleTime + 5);
  return poll(async () => {
    const after = await getSchedule(id);
    return after.lastScheduleTime === before.nextScheduleTime && after;
  }, `schedule ${id} to fire its tick at ${before.nextScheduleTime}`);
}

/**
 * `next` is the next tick of `* * * * *` computed at some instant between
 * `from` and `to`: the first whole minute after it. Exact wherever a minute
 * boundary falls between the two readings.
 */
function expectNextMinute(next: number, from: number, to: number): void {
  expect(next % 60_000).toBe(0);
  expect(next).toBeGreaterThan(from);
  expect(next).toBeLessThanOrEqual(to + 60_000);
}

const producedBy = (id: string) => messagesWhere(dispatch, { scheduleId: id });

describe("a schedule", () => {
  it("is created with its configuration, fires at every tick, and publishes the stored request each time", async () => {
    const before = now();
    const id = await createOk(
      `${receiver.url}/tick`,
      {
        "Svc-Cron": " * * * * * ",
        "Content-Type": "application/json",
        "Svc-Method": "PUT",
        "Svc-Retries": "2",
        "Svc-Timeout": "30s",
        "Svc-Delay": "0s",
        "Svc-Forward-X-Tenant": "acme",
        "Svc-Label": "billing",
        "Svc-Callback": `${receiver.url}/callback`,
        "Authorization-Extra": "ignored",
      },
      '{"job":"report"}',
    );
    expect(id).toMatch(/^scd_\w{28}$/);
    const created = await getSchedule(id);
    expect(created).toMatchObject({
      scheduleId: id,
      cron: "* * * * *",
      destination: `${receiver.url}/tick`,
      method: "PUT",
      retries: 2,
      timeout: 30,
      header: { "X-Tenant": ["acme"], "Content-Type": ["application/json"] },
      body: '{"job":"report"}',
      callback: `${receiver.url}/callback`,
      isPaused: false,
      label: "billing",
      labels: ["billing"],
    });
    expect(created.callerIP).toMatch(/127\.0\.0\.1/);
    expect(created.lastScheduleTime).toBeUndefined();
    expectNextMinute(created.nextScheduleTime, before, now());

    const first = await passNextTick(id);
    expect(first.nextScheduleTime).toBe(created.nextScheduleTime + 60_000);
    const second = await passNextTick(id);
    expect(second.lastScheduleTime).toBe(created.nextScheduleTime + 60_000);
    expect(second.nextScheduleTime).toBe(created.nextScheduleTime + 120_000);

    const produced = await producedBy(id);
    expect(produced).toHaveLength(2);
    const ticks = await poll(() => {
      const got = receiver.requests.filter((request) => request.path === "/tick");
      return got.length >= 2 && receiver.requests.some((request) => request.path === "/callback") && got;
    }, "two ticks and a callback");
    expect(ticks).toHaveLength(2);
    for (const request of ticks) {
      expect(request.method).toBe("PUT");
      expect(request.headers["svc-schedule-id"]).toBe(id);
      expect(request.headers["x-tenant"]).toBe("acme");
      expect(request.headers["authorization-extra"]).toBeUndefined();
      expect(request.body.toString()).toBe('{"job":"report"}');
    }
    const message = await (await dispatch.api(`/v2/messages/${produced[1]!.id}`)).json();
    expect(message).toMatchObject({ scheduleId: id, maxRetries: 2, labels: ["billing"] });
    const callback = receiver.requests.find((request) => request.path === "/callback")!;
    expect(JSON.parse(callback.body.toString())).toMatchObject({ scheduleId: id });
    await poll(async () => Object.values((await getSchedule(id)).lastScheduleStates ?? {})[0] === "SUCCESS", "SUCCESS");
    expect((await getSchedule(id)).lastScheduleStates).toEqual({ [produced[1]!.id]: "SUCCESS" });

    const events = await (await dispatch.api(`/v2/events?scheduleId=${id}`)).json();
    expect(new Set(events.events.map((event: { messageId: string }) => event.messageId))).toEqual(
      new Set(produced.map((row) => row.id)),
    );
    expect((await (await dispatch.api("/v2/schedules")).json()).map((s: ScheduleJson) => s.scheduleId)).toContain(id);
  });

  it("with a Schedule-Id is replaced whole by a second create, keeping the id", async () => {
    const headers = { "Svc-Cron": "0 * * * *", "Svc-Schedule-Id": "nightly.report", "Svc-Retries": "5" };
    expect(await createOk(`${receiver.url}/v1`, headers, "first body")).toBe("nightly.report");
    const replaced = await createOk(`${receiver.url}/v2`, { "Svc-Cron": "*/5 * * * *", "Svc-Schedule-Id": "nightly.report" });
    expect(replaced).toBe("nightly.report");
    const schedule = await getSchedule("nightly.report");
    expect(schedule).toMatchObject({ cron: "*/5 * * * *", destination: `${receiver.url}/v2`, retries: 3 });
    // The body left out is removed: no body key (docs/hosted-api.md §7.2).
    expect(schedule).not.toHaveProperty("body");
    expect(schedule.nextScheduleTime % 300_000).toBe(0);
    expect((await storedSchedules(dispatch, { id: "nightly.report" })).length).toBe(1);
  });

  it("fans out to a URL group and enqueues into its Queue-Name", async () => {
    const group = "scheduled-group";
    for (const path of ["/a", "/b"]) {
      const response = await dispatch.api(`/v2/topics/${group}/endpoints`, {
        method: "POST",
        body: JSON.stringify({ endpoints: [{ url: `${receiver.url}${path}` }] }),
      });
      expect(response.status).toBe(200);
    }
    const id = await createOk(group, { "Svc-Cron": "* * * * *", "Svc-Queue-Name": "scheduled-queue" });
    await passNextTick(id);
    const produced = await producedBy(id);
    expect(produced.map((row) => [row.url, row.topicName, row.queueName]).sort()).toEqual([
      [`${receiver.url}/a`, group, "scheduled-queue"],
      [`${receiver.url}/b`, group, "scheduled-queue"],
    ]);
    expect(await getSchedule(id)).toMatchObject({ queueName: "scheduled-queue" });
  });

  it("paused skips its ticks, resumed fires from the next tick on, deleted fires no more", async () => {
    const paused = await createOk(`${receiver.url}/paused`, { "Svc-Cron": "* * * * *" });
    const marker = await createOk(`${receiver.url}/marker`, { "Svc-Cron": "* * * * *" });
    expect((await dispatch.api(`/v2/schedules/${paused}/pause`, { method: "PATCH" })).status).toBe(200);
    expect((await dispatch.api(`/v2/schedules/${paused}/pause`, { method: "POST" })).status).toBe(200);
    expect((await getSchedule(paused)).isPaused).toBe(true);
    // The marker's tick is due at the same time: once it has fired, the paused one was passed over.
    await passNextTick(marker);
    await passNextTick(marker);
    expect(await producedBy(paused)).toEqual([]);
    expect((await getSchedule(paused)).lastScheduleTime).toBeUndefined();

    const resuming = now();
    expect((await dispatch.api(`/v2/schedules/${paused}/resume`, { method: "PATCH" })).status).toBe(200);
    const resumed = await getSchedule(paused);
    expect(resumed.isPaused).toBe(false);
    expectNextMinute(resumed.nextScheduleTime, resuming, now());
    await passNextTick(paused);
    expect(await producedBy(paused)).toHaveLength(1);

    expect((await dispatch.api(`/v2/schedules/${paused}`, { method: "DELETE" })).status).toBe(200);
    expect((await dispatch.api(`/v2/schedules/${paused}`)).status).toBe(404);
    await passNextTick(marker);
    expect(await producedBy(paused)).toHaveLength(1);
    const [kept] = await producedBy(paused);
    expect((await dispatch.api(`/v2/messages/${kept!.id}`)).status).toBe(200);
  });

  it("makes messages under its flow-control key", async () => {
    const id = await createOk(`${receiver.url}/flow`, {
      "Svc-Cron": "* * * * *",
      "Svc-Flow-Control-Key": "scheduled-key",
      "Svc-Flow-Control-Value": "parallelism=1",
    });
    await passNextTick(id);
    const [made] = await producedBy(id);
    const message = await (await dispatch.api(`/v2/messages/${made!.id}`)).json();
    expect(message).toMatchObject({ scheduleId: id, flowControlKey: "scheduled-key", parallelism: 1 });
    expect(await getSchedule(id)).toMatchObject({ flowControlKey: "scheduled-key", parallelism: 1 });
  });

  it("a tick whose URL group is gone produces nothing and says why", async () => {
    await dispatch.api("/v2/topics/doomed-group/endpoints", {
      method: "POST",
      body: JSON.stringify({ endpoints: [{ url: `${receiver.url}/doomed` }] }),
    });
    const id = await createOk("doomed-group", { "Svc-Cron": "* * * * *" });
    expect((await dispatch.api("/v2/topics/doomed-group", { method: "DELETE" })).status).toBe(200);
    const fired = await passNextTick(id);
    expect(fired.error).toMatch(/doomed-group/);
    expect(await producedBy(id)).toEqual([]);
  });

  it("hides what Redact-Fields names when shown, and still publishes the originals", async () => {
    const id = await createOk(
      `${receiver.url}/secret`,
      { "Svc-Cron": "* * * * *", "Svc-Redact-Fields": "body,header[X-Api-Key]", "Svc-Forward-X-Api-Key": "k-123" },
      "card=4242",
    );
    const shown = await getSchedule(id);
    expect(shown.body).toMatch(/^REDACTED:[0-9a-f]{64}$/);
    expect((shown.header as Record<string, string[]>)["X-Api-Key"]![0]).toMatch(/^REDACTED:/);
    await passNextTick(id);
    const got = await poll(() => receiver.requests.find((request) => request.path === "/secret"), "the tick's delivery to /secret");
    expect(got!.body.toString()).toBe("card=4242");
    expect(got!.headers["x-api-key"]).toBe("k-123");
  });
});

describe("bad schedules are refused with a 400 and store nothing", () => {
  it.each([
    [{}, /cron expression is required/],
    [{ "Svc-Cron": "every minute" }, /invalid cron/],
    [{ "Svc-Cron": "* * * *" }, /five fields/],
    [{ "Svc-Cron": "CRON_TZ=Nowhere/Land * * * * *" }, /unknown time zone/],
    [{ "Svc-Cron": "* * * * *", "Svc-Schedule-Id": "bad id!" }, /schedule-id may hold only/],
    [{ "Svc-Cron": "* * * * *", "Svc-Retries": "many" }, /retries/],
    [{ "Svc-Cron": "* * * * *", "Svc-Not-Before": "1700000000" }, /not-before cannot be used on a schedule/],
    [{ "Svc-Cron": "* * * * *", "Svc-Deduplication-Id": "x" }, /deduplication-id cannot be used on a schedule/],
    [{ "Svc-Cron": "* * * * *", "Svc-Queue-Name": "no spaces allowed" }, /invalid queue name/],
    [{ "Svc-Cron": "* * * * *", "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "parallelism=-1" }, /must be a whole number/],
  ])("%j", async (headers, message) => {
    const response = await create(`${receiver.url}/never`, headers as Record<string, string>);
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatch(message);
    expect((await storedSchedules(dispatch, { destination: `${receiver.url}/never` })).length).toBe(0);
  });

  it("an invalid destination is a 400; an unknown URL group a 404; an unknown id a 404 (a delete of one changes nothing: 200)", async () => {
    expect((await create("not a url", { "Svc-Cron": "* * * * *" })).status).toBe(400);
    expect((await create("no-such-group", { "Svc-Cron": "* * * * *" })).status).toBe(404);
    for (const [method, path] of [["GET", ""], ["PATCH", "/pause"], ["POST", "/resume"]] as const) {
      expect((await dispatch.api(`/v2/schedules/scd_missing${path}`, { method })).status).toBe(404);
    }
    expect((await dispatch.api("/v2/schedules/scd_missing", { method: "DELETE" })).status).toBe(200);
  });
});

describe("ticks across processes", () => {
  it("fire once each with a second worker on the same database judging by the same clock", async () => {
    const second = await startTestService({}, { role: "worker", databaseUrl: dispatch.service.databaseUrl, now });
    try {
      const id = await createOk(`${receiver.url}/raced`, { "Svc-Cron": "* * * * *" });
      for (let tick = 0; tick < 3; tick++) await passNextTick(id);
      expect(await producedBy(id)).toHaveLength(3);
    } finally {
      await second.stop();
    }
  });

  it("fire exactly once with two worker processes racing, however many were missed while none ran", async () => {
    const api = await startTestService({}, { role: "api" });
    try {
      // A yearly cron, the one of two whose next tick is further away: no real tick can come due while the
      // test runs, wherever a minute (or a year) boundary falls, so every message counted is the catch-up's.
      const cron = farCron(Date.now());
      const id = await (
        await api.api(`/v2/schedules/${receiver.url}/once`, { method: "POST", headers: { "Svc-Cron": cron } })
      ).json();
      // No worker ran for the last ten years: ten ticks came due unseen.
      await api.service.sql`update dispatch.schedules set next_tick_at = now() - interval '10 years' where id = ${id.scheduleId}`;
      const env = {
        DATABASE_URL: api.service.databaseUrl,
        DISPATCH_TOKEN: TEST_TOKEN,
        DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
      };
      const started = Date.now();
      const workers = await Promise.all([1, 2].map(() => startDispatchProcess("worker", env)));
      try {
        await poll(() => receiver.requests.some((request) => request.path === "/once"), "the tick's delivery to /once");
        const schedule = await (await api.api(`/v2/schedules/${id.scheduleId}`)).json();
        // The next tick is one still to come when the workers started, not one of the ten missed.
        expect(schedule.nextScheduleTime).toBeGreaterThan(started);
        expect(schedule.nextScheduleTime).toBeGreaterThan(Date.now() + 30 * 24 * 3600_000);
        // A marker published now is delivered first: the workers are well past their first look at the schedules.
        await engineCycle(api);
        expect(await countMessages(api, { scheduleId: id.scheduleId })).toBe(1);
        const [first] = await api.service.sql<{ id: string }[]>`select id from dispatch.messages where schedule_id = ${id.scheduleId}`;
        expect(receiver.requests.filter((request) => request.headers["svc-message-id"] === first!.id)).toHaveLength(1);
      } finally {
        await Promise.all(workers.map((worker) => worker.terminate()));
      }
    } finally {
      await api.stop();
    }
  });
});

/** Of two yearly crons (1 January, 1 July, at midnight UTC), the one whose next tick is further from `now`: at least three months away. */
function farCron(now: number): string {
  const year = new Date(now).getUTCFullYear();
  const nextOf = (month: number) => [year, year + 1].map((y) => Date.UTC(y, month, 1)).find((at) => at > now)!;
  return nextOf(0) > nextOf(6) ? "0 0 1 1 *" : "0 0 1 7 *";
}
