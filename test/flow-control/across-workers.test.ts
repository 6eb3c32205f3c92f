/**
 * Flow-control limits hold per key across worker processes: two workers
 * (real child processes) deliver one key's messages, and the receiver never
 * sees more than its parallelism at once, nor do they start more than its rate
 * in any period.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { useCountingReceiver } from "../support/concurrency";
import { busiestWindow } from "../support/sliding-window";
import { expectHeldBack } from "../support/engine";
import { poll } from "../support/poll";
import { type DispatchProcess, killAllDispatchProcesses, startDispatchProcess } from "../support/processes";
import { attempts, countMessages, messagesWhere } from "../support/rows";
import { TEST_TOKEN, useDispatch } from "../support/service";

const dispatch = useDispatch({}, { role: "api" });
const counting = useCountingReceiver(100);
let workers: DispatchProcess[] = [];

beforeAll(async () => {
  const env = {
    DATABASE_URL: dispatch.service.databaseUrl,
    DISPATCH_TOKEN: TEST_TOKEN,
    DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
    DISPATCH_WORKER_CONCURRENCY: "16",
  };
  workers = await Promise.all([1, 2].map(() => startDispatchProcess("worker", env)));
});
afterEach(() => {
  counting.receiver.requests.length = 0;
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.terminate()));
  await killAllDispatchProcesses();
});

async function publishMany(path: string, count: number, value: string) {
  const items = Array.from({ length: count }, (_, i) => ({
    destination: `${counting.receiver.url}${path}`,
    headers: { "Svc-Flow-Control-Key": `across${path.replace("/", "-")}`, "Svc-Flow-Control-Value": value },
    body: String(i),
  }));
  const response = await dispatch.api("/v2/batch", { method: "POST", body: JSON.stringify(items) });
  expect(response.status).toBe(200);
}

const arrived = (path: string, count: number) =>
  poll(() => {
    const got = counting.receiver.requests.filter((request) => request.path === path);
    return got.length >= count && got;
  }, `${count} requests to ${path}`, 30_000);

it("parallelism 3 is never exceeded by two workers together, and is reached", async () => {
  await publishMany("/parallel", 24, "parallelism=3");
  const got = await arrived("/parallel", 24);
  expect(counting.maxInFlight("/parallel")).toBe(3);
  expect(new Set(got.map((request) => request.body.toString())).size).toBe(24);
  const delivered = () => countMessages(dispatch, { flowControlKey: "across-parallel", states: ["DELIVERED"] });
  await poll(async () => (await delivered()) === 24, "all 24 recorded as delivered");
  // Each was sent once: the workers did not both take one.
  expect(counting.receiver.requests.filter((request) => request.path === "/parallel")).toHaveLength(24);
});

it("a paused key holds its messages in both workers; resumed, they go", async () => {
  expect((await dispatch.api("/v2/flowControl/across-parallel/pause", { method: "POST" })).status).toBe(200);
  await publishMany("/parallel", 6, "parallelism=3");
  const held = await messagesWhere(dispatch, { flowControlKey: "across-parallel", states: ["CREATED"] });
  expect(held).toHaveLength(6);
  await expectHeldBack(dispatch, held.map((row) => row.id));
  expect(counting.receiver.requests).toHaveLength(0);
  expect((await dispatch.api("/v2/flowControl/across-parallel/resume", { method: "POST" })).status).toBe(200);
  await arrived("/parallel", 6);
});

it("a pinned parallelism of 1 holds across both workers whatever messages bring", async () => {
  await publishMany("/pinned", 1, "parallelism=8");
  await arrived("/pinned", 1);
  expect((await dispatch.api("/v2/flowControl/across-pinned/pin?parallelism=1", { method: "POST" })).status).toBe(200);
  await publishMany("/pinned", 12, "parallelism=8");
  await arrived("/pinned", 13);
  expect(counting.maxInFlight("/pinned")).toBe(1);
});

it("rate 10 per second: no one-second window sees more than 10 starts", async () => {
  await publishMany("/rated", 30, "rate=10, period=1s");
  const got = await arrived("/rated", 30);
  // The starts the two workers recorded: the receiver's clock would add how late this busy test process reads each request.
  const rated = await messagesWhere(dispatch, { url: `${counting.receiver.url}/rated` });
  const starts = await poll(async () => {
    const recorded = await attempts(dispatch, rated.map((message) => message.id));
    return recorded.length === 30 && recorded;
  }, "the 30 attempts to be recorded");
  expect(busiestWindow(starts.map((start) => start.startedAt.getTime()), 1000)).toBeLessThanOrEqual(10);
  expect(new Set(got.map((request) => request.body.toString())).size).toBe(30);
});
