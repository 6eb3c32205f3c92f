/**
 * `context.invoke` (child runs reporting back to the parent), a labelled run,
 * and notify before the wait (lookback by run id), with the official SDK's
 * Hono adapter (`serveMany` + `createWorkflow`) hosted on 127.0.0.1.
 */
import type { AddressInfo } from "node:net";
import { serve as serveHttp, type ServerType } from "@hono/node-server";
import { Client as QStashClient, Receiver } from "@upstash/qstash";
import { Client as WorkflowClient } from "@upstash/workflow";
import { createWorkflow, serveMany } from "@upstash/workflow/hono";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedRun, storedRuns } from "../support/rows";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { waitForReport } from "../support/workflow-app";

const dispatch = useDispatch();
let server: ServerType;
let baseUrl: string;
let client: WorkflowClient;
const seen = new Map<string, unknown>();

const waitFor = <T>(key: string, timeoutMs?: number) => waitForReport<T>(seen, key, timeoutMs);

beforeAll(async () => {
  const options = {
    qstashClient: new QStashClient({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN, retry: false }),
    receiver: new Receiver({
      currentSigningKey: dispatch.service.signingKeys.current,
      nextSigningKey: dispatch.service.signingKeys.next,
    }),
  };
  const child = createWorkflow(async (context) => {
    const doubled = await context.run("double", () => (context.requestPayload as { n: number }).n * 2);
    if (doubled < 0) throw new Error("negative");
    return { doubled, label: context.label };
  }, options);
  const parent = createWorkflow(async (context) => {
    const ok = await context.invoke("ok", { workflow: child, body: { n: 21 } });
    const failed = await context.invoke("failed", { workflow: child, body: { n: -1 }, retries: 0 });
    seen.set(`invoke:${context.workflowRunId}`, { ok, failed: { isFailed: failed.isFailed, isCanceled: failed.isCanceled } });
  }, options);
  const labelled = createWorkflow(async (context) => {
    await context.run("step", () => 1);
    seen.set(`label:${context.workflowRunId}`, context.label);
  }, options);
  const lookback = createWorkflow(async (context) => {
    await context.sleep("let the notify land first", 1);
    const { eventData, timeout } = await context.waitForEvent("wait", "early-event", { timeout: "10s" });
    seen.set(`lookback:${context.workflowRunId}`, { eventData, timeout });
  }, options);
  const app = new Hono().post("/workflows/:id", serveMany({ child, parent, labelled, lookback }, options));
  server = await new Promise((resolve) => {
    const s = serveHttp({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/workflows`;
  client = new WorkflowClient({ baseUrl: dispatch.baseUrl, token: TEST_TOKEN });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("invoke, labels and lookback notify", () => {
  it("invokes child runs and gets their result, success or failure", async () => {
    const { workflowRunId } = await client.trigger({ url: `${baseUrl}/parent` });
    const result = await waitFor<{ ok: { body: unknown; isFailed: boolean; isCanceled: boolean }; failed: unknown }>(
      `invoke:${workflowRunId}`,
    );
    expect(result.ok).toEqual({ body: { doubled: 42 }, isFailed: false, isCanceled: false });
    expect(result.failed).toEqual({ isFailed: true, isCanceled: false });
    const children = await storedRuns(dispatch, { invokedBy: workflowRunId });
    expect(children.map((row) => row.state)).toEqual(["RUN_SUCCESS", "RUN_FAILED"]);
  });

  it("labels a run: stored for filtering and readable as context.label", async () => {
    const { workflowRunId } = await client.trigger({ url: `${baseUrl}/labelled`, label: "nightly" });
    expect(await waitFor(`label:${workflowRunId}`)).toBe("nightly");
    const run = await storedRun(dispatch, workflowRunId);
    expect(run!.labels).toEqual(["nightly"]);
  });

  it("keeps a notify for a run that is not waiting yet and delivers it when the wait comes", async () => {
    const { workflowRunId } = await client.trigger({ url: `${baseUrl}/lookback` });
    await client.notify({ eventId: "early-event", eventData: "came early", workflowRunId });
    expect(await waitFor(`lookback:${workflowRunId}`)).toEqual({ eventData: "came early", timeout: false });
  });
});
