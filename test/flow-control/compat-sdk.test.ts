/**
 * The official SDKs' flow control against Dispatch: `client.flowControl.*`,
 * the `flowControl` option of publish, enqueue and batch (qstash-js), and a
 * workflow run triggered with flow control, every step of which counts
 * against the run's key (workflow-js).
 */
import { Client } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useCountingReceiver } from "../support/concurrency";
import { poll } from "../support/poll";
import { messagesWhere } from "../support/rows";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

const dispatch = useDispatch();
const counting = useCountingReceiver(60);
let client: Client;
let app: WorkflowApp;
/** Workflow steps running at once, and the most seen. */
const steps = { now: 0, most: 0, done: 0 };

beforeAll(async () => {
  // devMode: false keeps the SDK from looking for (or downloading) its local dev server.
  client = new Client({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, devMode: false, retry: false });
  const step = async () => {
    steps.most = Math.max(steps.most, ++steps.now);
    await new Promise((resolve) => setTimeout(resolve, 30));
    steps.now--;
  };
  app = await startWorkflowApp(dispatch, {
    "/limited": {
      route: async (context) => {
        await context.run("one", step);
        await context.run("two", step);
        steps.done++;
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

const url = (path: string) => `${counting.receiver.url}${path}`;

describe("qstash-js flow control", () => {
  it("publish, enqueue and batch carry flowControl; the key's state, pause, resume, pin, unpin and resetRate", async () => {
    const flowControl = { key: "sdk-key", parallelism: 2, rate: 50, period: "1s" as const };
    const published = await client.publishJSON({ url: url("/sdk"), body: { n: 0 }, flowControl });
    await client.queue({ queueName: "sdk-fc-queue" }).enqueueJSON({ url: url("/sdk"), body: { n: 1 }, flowControl });
    await client.batchJSON([2, 3, 4, 5].map((n) => ({ url: url("/sdk"), body: { n }, flowControl })));
    await poll(() => counting.receiver.requests.filter((r) => r.path === "/sdk").length === 6 || undefined, "6 deliveries");
    expect(counting.maxInFlight("/sdk")).toBeLessThanOrEqual(2);
    const message = await client.messages.get(published.messageId);
    expect(message).toMatchObject({ flowControlKey: "sdk-key", parallelism: 2, rate: 50, period: 1 });

    const info = await client.flowControl.get("sdk-key");
    expect(info).toMatchObject({
      flowControlKey: "sdk-key",
      parallelismMax: 2,
      rateMax: 50,
      ratePeriod: 1,
      isPaused: false,
      isPinnedParallelism: false,
      isPinnedRate: false,
    });
    await client.flowControl.pause("sdk-key");
    expect((await client.flowControl.get("sdk-key")).isPaused).toBe(true);
    await client.flowControl.resume("sdk-key");
    expect((await client.flowControl.get("sdk-key")).isPaused).toBe(false);
    await client.flowControl.pin("sdk-key", { parallelism: 1, rate: 5, period: 10 });
    expect(await client.flowControl.get("sdk-key")).toMatchObject({
      parallelismMax: 1,
      rateMax: 5,
      ratePeriod: 10,
      rateCount: 0,
      isPinnedParallelism: true,
      isPinnedRate: true,
    });
    await client.flowControl.unpin("sdk-key", { parallelism: true, rate: false });
    expect(await client.flowControl.get("sdk-key")).toMatchObject({ isPinnedParallelism: false, isPinnedRate: true });
    await client.flowControl.resetRate("sdk-key");
    expect((await client.flowControl.get("sdk-key")).rateCount).toBe(0);
    const global = await client.flowControl.getGlobalParallelism();
    expect(global.parallelismMax).toBe(dispatch.config.workerConcurrency);
  });
});

describe("workflow-js flow control", () => {
  it("every step of runs triggered with flowControl counts against the run's key", async () => {
    const runs = await Promise.all(
      [1, 2, 3].map(() => app.client.trigger({ url: app.url("/limited"), flowControl: { key: "wf-key", parallelism: 1 } })),
    );
    await poll(() => steps.done === 3, "three runs to finish", 30_000);
    expect(steps.most).toBe(1);
    const messages = await messagesWhere(dispatch, { workflowRunIds: runs.map((run) => run.workflowRunId) });
    const keys = [...new Set(messages.map((message) => message.flowControlKey))].map((key) => ({
      key,
      n: messages.filter((message) => message.flowControlKey === key).length,
    }));
    expect(keys).toEqual([{ key: "wf-key", n: expect.any(Number) }]);
    expect(keys[0]!.n).toBeGreaterThanOrEqual(9);
    expect((await client.flowControl.get("wf-key")).parallelismMax).toBe(1);
  });
});
