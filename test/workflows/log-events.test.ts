/**
 * Workflow events (docs/hosted-api.md §13.2, event mode): `GET
 * /v2/workflows/events` without `groupBy`, as the hosted description sends
 * it — the events of runs of real `serve()` workflows, filtered by state,
 * time and `workflowRuns`, paged, with `trimBody` — and the parameters the
 * run logs take alongside (`workflowRuns`, step states, `trimBody`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp } from "../support/workflow-app";

/** Workflow sleeps are scaled (DISPATCH_DELAY_SCALE): a 1 s sleep waits 10 ms; the logs keep 1 s. */
const dispatch = useDispatch({ delayScale: 0.01 });
let app: WorkflowApp;
const flakyCalls = new Map<string, number>();

// Events and runs are read as plain JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

beforeAll(async () => {
  app = await startWorkflowApp(dispatch, {
    "/steps": {
      route: async (context) => {
        await context.run("first", () => "first-output");
        await context.sleep("nap", 1);
        return context.run("second", () => "done");
      },
    },
    "/flaky": {
      route: async (context) => {
        await context.run("flaky", () => {
          const calls = (flakyCalls.get(context.workflowRunId) ?? 0) + 1;
          flakyCalls.set(context.workflowRunId, calls);
          if (calls === 1) throw new Error("flaky exploded once");
          return "recovered";
        });
      },
    },
    "/failing": {
      route: async (context) => {
        await context.run("boom", () => {
          throw new Error("boom exploded");
        });
      },
      options: { failureFunction: async () => "handled" },
    },
    "/sleepy": { route: async (context) => context.sleep("long", 3600) },
  });
});
afterAll(async () => {
  await app.close();
});

/** `GET /v2/workflows/events?<query>`: a page of events. */
async function events(query: string): Promise<{ events: Json[]; cursor?: string }> {
  const response = await dispatch.api(`/v2/workflows/events?${query}`);
  expect(response.status, query).toBe(200);
  return response.json();
}

/** The run's events, once it has ended (its end event is the newest). */
async function endedRunEvents(workflowRunId: string, extra = ""): Promise<Json[]> {
  let last: Json[] = [];
  return poll(async () => {
    last = (await events(`workflowRunId=${workflowRunId}${extra}`)).events;
    return /^RUN_(SUCCESS|FAILED|CANCELED)$/.test(last[0]?.state ?? "") && last;
  }, () => `the events of ${workflowRunId} to end; last: ${JSON.stringify(last)}`);
}

const states = (list: Json[]) => list.map((event) => event.state);

describe("events of a run", () => {
  it("lists what happened, newest first: start, each result and delivery, end", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/steps"), body: { hi: 1 }, label: "evt" });
    const list = await endedRunEvents(workflowRunId);
    expect(states(list).reverse()).toEqual([
      "RUN_STARTED",
      "STEP_SUCCESS", // init
      "STEP_PROGRESS", // its delivery runs "first"
      "STEP_SUCCESS", // first
      "STEP_PROGRESS",
      "STEP_SUCCESS", // nap
      "STEP_PROGRESS", // held for the nap
      "STEP_SUCCESS", // second
      "STEP_PROGRESS",
      "RUN_SUCCESS",
    ]);
    const [end, , second, held, nap, , first, , init, start] = list;
    const run = { workflowRunId, workflowUrl: app.url("/steps"), label: "evt", labels: ["evt"], callerIp: "127.0.0.1" };
    expect(start).toMatchObject({ ...run, state: "RUN_STARTED", time: start!.workflowCreatedAt });
    expect(start!.headers).toMatchObject({ "Content-Type": ["application/json"] });
    for (const event of list) expect(event.workflowCreatedAt).toBe(start!.workflowCreatedAt);
    for (let i = 1; i < list.length; i++) expect(list[i - 1]!.time).toBeGreaterThanOrEqual(list[i]!.time);

    expect(init!.stepInfo).toMatchObject({ stepName: "init", stepType: "Initial", callType: "step", state: "STEP_SUCCESS" });
    expect(first!.stepInfo).toEqual({
      stepId: 1,
      stepName: "first",
      stepType: "Run",
      callType: "step",
      messageId: expect.stringMatching(/^msg_/),
      concurrent: 1,
      state: "STEP_SUCCESS",
      createdAt: first!.time,
      retries: 3,
    });
    expect(nap!.stepInfo).toMatchObject({ stepId: 2, stepType: "SleepFor", sleepFor: 1000 });
    expect(second!.stepInfo).toMatchObject({ stepId: 3, stepName: "second" });
    // The nap's message is due a second after it was published (the stored time is not scaled).
    expect(held).toMatchObject({ state: "STEP_PROGRESS", nextDeliveryTime: held!.time + 1000 });
    expect(held!.stepInfo).toEqual({
      messageId: nap!.stepInfo.messageId,
      callType: "step",
      state: "STEP_PROGRESS",
      createdAt: held!.time,
      retries: 3,
      nextDeliveryTime: held!.time + 1000,
    });
    expect(held!.headers).toMatchObject({ "Upstash-Workflow-Sdk-Version": ["1"] });
    expect(end).toMatchObject({ ...run, state: "RUN_SUCCESS" });
    // trimBody is -1 by default: no bodies.
    for (const event of list) {
      expect(event).not.toHaveProperty("workflowRunResponse");
      expect(event.stepInfo ?? {}).not.toHaveProperty("out");
    }
  });

  it("shows bodies cut to trimBody bytes, never inside a character", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/steps"), body: "€uro" });
    await endedRunEvents(workflowRunId);
    const whole = (await events(`workflowRunId=${workflowRunId}&trimBody=1000`)).events;
    expect(whole[0]).toMatchObject({ state: "RUN_SUCCESS", workflowRunResponse: '"done"' });
    expect(whole.find((e) => e.stepInfo?.stepName === "first")!.stepInfo.out).toBe('"first-output"');
    const cut = (await events(`workflowRunId=${workflowRunId}&trimBody=4`)).events;
    expect(cut[0]!.workflowRunResponse).toBe('"don');
    expect(cut.find((e) => e.stepInfo?.stepName === "first")!.stepInfo.out).toBe('"fir');
    const input = async (bytes: number) =>
      (await events(`workflowRunId=${workflowRunId}&trimBody=${bytes}`)).events.find((e) => e.stepInfo?.stepType === "Initial")!.stepInfo.out;
    // "€" is three bytes: two bytes cannot hold it.
    expect([await input(2), await input(3), await input(4), await input(0)]).toEqual(["", "€", "€u", ""]);
  });

  it("shows a retried attempt's error and answer, a failed step and a failed run's DLQ entry", async () => {
    const { workflowRunId: flaky } = await app.client.trigger({ url: app.url("/flaky"), retries: 2 });
    const recovered = await endedRunEvents(flaky, "&trimBody=10000");
    expect(recovered[0]!.state).toBe("RUN_SUCCESS");
    const retry = recovered.find((event) => event.state === "STEP_RETRY")!;
    expect(retry).toMatchObject({
      error: "destination responded with status 500",
      responseStatus: 500,
      responseBody: expect.stringContaining("flaky exploded once"),
      responseHeaders: expect.objectContaining({ "Upstash-Error-Step-Name": ["flaky"] }),
      nextDeliveryTime: expect.any(Number),
    });
    expect(retry.stepInfo).toMatchObject({ state: "STEP_RETRY", stepName: "flaky", retries: 2, callType: "step" });

    const { workflowRunId: failing } = await app.client.trigger({ url: app.url("/failing"), retries: 0 });
    const failed = await endedRunEvents(failing);
    expect(states(failed).slice(0, 2)).toEqual(["RUN_FAILED", "STEP_FAILED"]);
    expect(failed[0]!.dlqId).toEqual(expect.any(String));
    expect(failed[1]).toMatchObject({ error: "destination responded with status 500", responseStatus: 500 });
    expect(failed[1]).not.toHaveProperty("responseBody");
    expect(failed[1]!.stepInfo).toMatchObject({ state: "STEP_FAILED", stepName: "boom", retries: 0 });
  });

  it("shows a cancelled run's pending step as cancelled", async () => {
    const { workflowRunId } = await app.client.trigger({ url: app.url("/sleepy") });
    await poll(async () => (await events(`workflowRunId=${workflowRunId}&state=STEP_SUCCESS`)).events.length === 2, "the sleep step");
    await app.client.cancel({ ids: workflowRunId });
    const list = await endedRunEvents(workflowRunId);
    expect(states(list).slice(0, 2)).toEqual(["RUN_CANCELED", "STEP_CANCELED"]);
    const sleep = list.find((event) => event.stepInfo?.stepType === "SleepFor")!;
    expect(list[1]!.stepInfo).toMatchObject({ messageId: sleep.stepInfo.messageId, state: "STEP_CANCELED" });
  });
});

describe("selecting events", () => {
  let a: { workflowRunId: string; createdAt: number };
  let b: { workflowRunId: string; createdAt: number };

  beforeAll(async () => {
    const [first, second] = await app.client.trigger([
      { url: app.url("/steps"), label: "select" },
      { url: app.url("/steps"), label: "select" },
    ]);
    const createdAt = async (id: string) => (await endedRunEvents(id)).at(-1)!.workflowCreatedAt as number;
    a = { workflowRunId: first!.workflowRunId, createdAt: await createdAt(first!.workflowRunId) };
    b = { workflowRunId: second!.workflowRunId, createdAt: await createdAt(second!.workflowRunId) };
  });

  it("filters by state, event time and label, run by run, newest run first", async () => {
    const both = (await events("label=select")).events;
    expect(both).toHaveLength(20);
    // b was triggered after a: its events come first.
    expect(new Set(both.slice(0, 10).map((e) => e.workflowRunId))).toEqual(new Set([b.workflowRunId]));
    const ends = (await events("label=select&state=RUN_SUCCESS,RUN_STARTED")).events;
    expect(states(ends)).toEqual(["RUN_SUCCESS", "RUN_STARTED", "RUN_SUCCESS", "RUN_STARTED"]);
    const results = (await events(`workflowRunId=${a.workflowRunId}&state=step_success`)).events;
    expect(results.map((e) => e.stepInfo.stepName)).toEqual(["second", "nap", "first", "init"]);

    const aEvents = both.filter((e) => e.workflowRunId === a.workflowRunId);
    const middle = aEvents[4]!.time as number;
    const window = (await events(`workflowRunId=${a.workflowRunId}&fromDate=${middle}&toDate=${aEvents[0]!.time}`)).events;
    expect(window).toEqual(aEvents.filter((e) => e.time >= middle));
  });

  it("takes runs by workflowRuns=ID@TS, ignoring every other filter", async () => {
    const pairs = `${a.workflowRunId}@${a.createdAt},${b.workflowRunId}@${b.createdAt}`;
    const listed = (await events(`workflowRuns=${pairs}&state=STEP_FAILED&label=nothing`)).events;
    expect(new Set(listed.map((e) => e.workflowRunId))).toEqual(new Set([a.workflowRunId, b.workflowRunId]));
    expect(listed).toHaveLength(20);
    expect((await events(`workflowRuns=${a.workflowRunId}@${a.createdAt + 1}`)).events).toEqual([]);

    const runs = await (await dispatch.api(`/v2/workflows/logs?workflowRuns=${pairs}`)).json();
    expect(runs.runs.map((run: Json) => run.workflowRunId)).toEqual([b.workflowRunId, a.workflowRunId]);
  });

  it("pages with a cursor that neither repeats nor skips an event", async () => {
    const all = (await events("label=select")).events;
    const paged: Json[] = [];
    let cursor: string | undefined;
    do {
      const page = await events(`label=select&count=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.events.length).toBeLessThanOrEqual(3);
      paged.push(...page.events);
      cursor = page.cursor;
    } while (cursor);
    expect(paged).toEqual(all);
  });
});

describe("the run logs' new parameters", () => {
  it("select runs by a step state, and cut bodies to trimBody", async () => {
    const { workflowRunId: failing } = await app.client.trigger({ url: app.url("/failing"), retries: 0, label: "steps" });
    const { workflowRunId: fine } = await app.client.trigger({ url: app.url("/steps"), label: "steps" });
    await endedRunEvents(failing);
    await endedRunEvents(fine);
    const failed = await (await dispatch.api("/v2/workflows/logs?label=steps&state=STEP_FAILED")).json();
    expect(failed.runs.map((run: Json) => run.workflowRunId)).toEqual([failing]);
    const either = await (await dispatch.api("/v2/workflows/logs?label=steps&state=RUN_SUCCESS,STEP_FAILED")).json();
    expect(either.runs.map((run: Json) => run.workflowRunId)).toEqual([fine, failing]);

    const [run] = (await (await dispatch.api(`/v2/workflows/logs?workflowRunId=${fine}&trimBody=4`)).json()).runs;
    expect(run.workflowRunResponse).toBe('"don');
    expect(run.steps[1].steps[0].out).toBe('"fir');
    const [bare] = (await (await dispatch.api(`/v2/workflows/events?groupBy=workflowRunId&workflowRunId=${fine}&trimBody=-1`)).json()).runs;
    expect(bare).not.toHaveProperty("workflowRunResponse");
    expect(bare.steps[1].steps[0]).not.toHaveProperty("out");
    const [whole] = (await app.client.logs({ filter: { workflowRunId: fine } })).runs;
    expect(whole!.workflowRunResponse).toBe('"done"');
  });

  it("refuses what it cannot read", async () => {
    for (const query of [
      "/v2/workflows/events?trimBody=-2",
      "/v2/workflows/events?state=STEP_DONE",
      "/v2/workflows/events?cursor=abc",
      "/v2/workflows/events?workflowRuns=wfr_x",
      "/v2/workflows/events?workflowRuns=wfr_x@yesterday",
      "/v2/workflows/events?groupBy=messageId",
      "/v2/workflows/logs?trimBody=all",
    ]) {
      const response = await dispatch.api(query);
      expect(response.status, query).toBe(400);
      expect(await response.json(), query).toEqual({ error: expect.any(String) });
    }
  });
});
