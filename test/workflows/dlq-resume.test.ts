/**
 * Failed runs in the workflow DLQ — list, read, delete, resume (bulk and
 * single), restart, retry of the failure function — bulk cancel of runs, and
 * the REST trigger, driven by the official workflow `Client` and plain HTTP
 * against unmodified `serve()` handlers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poll } from "../support/poll";
import { sleep } from "../support/receiver";
import { messagesWhere, storedRun, storedRuns } from "../support/rows";
import { dashboardSession } from "../support/dashboard-session";
import { TEST_TOKEN, useDispatch } from "../support/service";
import { startWorkflowApp, type WorkflowApp, type WorkflowRoute } from "../support/workflow-app";

/** Workflow sleeps are scaled (DISPATCH_DELAY_SCALE): a 1 s sleep waits 10 ms; the logs keep 1 s. */
const dispatch = useDispatch({ delayScale: 0.01 });
let app: WorkflowApp;

/** Groups whose "second" step throws for now. */
const failing = new Set<string>();
/** How often each step function body ran, by `<group>:<n>:<step>`. */
const ran = new Map<string, number>();
const seen = new Map<string, unknown>();
/** The run that ran the third step of `<group>:<n>`. */
const finishedBy = new Map<string, string>();
let failureFunctionFails = true;

const bump = (key: string) => ran.set(key, (ran.get(key) ?? 0) + 1);
const ranOf = (group: string, n: number) => ({
  first: ran.get(`${group}:${n}:first`) ?? 0,
  second: ran.get(`${group}:${n}:second`) ?? 0,
  third: ran.get(`${group}:${n}:third`) ?? 0,
});

/**
 * Polls `probe` until it has a value (test/support/poll.ts), naming `what` when it times out: a guard
 * against a hang, wide enough for 55 runs on a Citus cluster of a busy 2-core machine (40 s alone there).
 */
const until = <T>(what: string, probe: () => Promise<T | undefined> | T | undefined) => poll(probe, what, 50_000);

async function runStates(runIds: string[]): Promise<Map<string, string>> {
  const rows = await storedRuns(dispatch, { runIds });
  return new Map(rows.map((row) => [row.runId, row.state]));
}

/** Waits until every run has ended, and returns their end states. */
async function ended(runIds: string[]): Promise<string[]> {
  return until(`${runIds.length} runs to end`, async () => {
    const states = await runStates(runIds);
    const all = runIds.map((id) => states.get(id));
    return all.every((state) => state !== undefined && state !== "RUN_STARTED") ? (all as string[]) : undefined;
  });
}

/** The workflow DLQ entries of `workflowUrl`, once there are `count` of them. */
async function dlqEntries(workflowUrl: string, count: number) {
  return until(`${count} DLQ entries for ${workflowUrl}`, async () => {
    const { messages } = await app.client.dlq.list({ count: 100, filter: { workflowUrl } });
    return messages.length === count ? messages : undefined;
  });
}

beforeAll(async () => {
  const flaky: WorkflowRoute = {
    route: async (context) => {
      const { group, n } = context.requestPayload as { group: string; n: number };
      const a = await context.run("first", () => {
        bump(`${group}:${n}:first`);
        return "one";
      });
      const b = await context.run("second", () => {
        bump(`${group}:${n}:second`);
        if (failing.has(group)) throw new Error(`second step of ${group} fails`);
        return "two";
      });
      await context.run("third", () => {
        bump(`${group}:${n}:third`);
        finishedBy.set(`${group}:${n}`, context.workflowRunId);
      });
      return `${a}-${b}`;
    },
  };
  app = await startWorkflowApp(dispatch, {
    "/flaky": flaky,
    "/bulk": flaky,
    "/parallel": {
      route: async (context) => {
        const results = await Promise.all([
          context.run("quick", () => "quick"),
          context.run("flaky", async () => {
            bump("parallel:0:second");
            // Lets the quick branch finish first, so its result is among the completed steps.
            await sleep(300);
            if (failing.has("parallel")) throw new Error("parallel branch fails");
            return "flaky";
          }),
          context.sleep("nap", 1).then(() => "napped"),
        ]);
        await context.run("after", () => bump("parallel:0:third"));
        return results;
      },
    },
    "/failure-fn": {
      route: async (context) => {
        await context.run("always fails", () => {
          throw new Error("this step always fails");
        });
      },
      options: {
        failureFunction: async ({ context, failStatus }) => {
          if (failureFunctionFails) throw new Error("failure function fails too");
          seen.set(`failure-fn:${context.workflowRunId}`, failStatus);
        },
      },
    },
    "/rest": {
      route: async (context) => {
        const greeting = await context.run("greet", () => `hello ${(context.requestPayload as { name: string }).name}`);
        seen.set(`rest:${context.workflowRunId}`, {
          greeting,
          trace: context.headers.get("x-trace"),
          label: context.label,
        });
        return greeting;
      },
    },
  });
});
afterAll(async () => {
  await app.close();
});

/** Triggers one flaky run of `group` (with no retries, so it fails fast) and waits for its DLQ entry. */
async function failedRun(group: string) {
  failing.add(group);
  const { workflowRunId } = await app.client.trigger({ url: app.url("/flaky"), body: { group, n: 0 }, retries: 0 });
  const entry = await until(`the DLQ entry of ${workflowRunId}`, async () => {
    const { messages } = await app.client.dlq.list({ filter: { workflowRunId } });
    return messages[0];
  });
  return { workflowRunId, entry };
}

describe("a plain DLQ retry of a run's failed step", () => {
  it.each(["the API", "the dashboard"])("through %s resumes the run from the failed step, which finishes; the entry leaves both DLQs", async (via) => {
    const group = via === "the API" ? "plain-api" : "plain-dashboard";
    const { workflowRunId, entry } = await failedRun(group);
    failing.delete(group);
    if (via === "the API") {
      const response = await dispatch.api(`/v2/dlq/retry/${entry.dlqId}`, { method: "POST" });
      expect(response.status).toBe(201);
      const { messageId } = await response.json();
      // The message the retry answers is the failed step published again, in a new run.
      const [retried] = await dispatch.service.sql<{ runId: string }[]>`
        select r.run_id as "runId" from dispatch.messages m join dispatch.workflow_runs r on r.pk = m.workflow_run_pk and r.project = m.project
        where m.id = ${messageId}`;
      expect(retried!.runId).toMatch(/^wfr_/);
      expect(retried!.runId).not.toBe(workflowRunId);
    } else {
      const { cookie, csrf } = await dashboardSession(dispatch.baseUrl);
      // The plain DLQ marks the entry as a run's step and links the run, in the list and on its page.
      for (const page of ["/dashboard/dlq", `/dashboard/dlq/${entry.dlqId}`]) {
        const html = await (await fetch(`${dispatch.baseUrl}${page}`, { headers: { cookie } })).text();
        expect(html, page).toContain(`href="/dashboard/workflows/${workflowRunId}"`);
      }
      const response = await fetch(`${dispatch.baseUrl}/dashboard/dlq/${entry.dlqId}/retry`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: `_csrf=${csrf}`,
        redirect: "manual",
      });
      expect(response.status).toBe(303);
    }
    // The completed first step was kept; the failed second ran again; the third ran: the run went on to its end.
    await until(`the resumed run of ${group} to run its third step`, () => (ranOf(group, 0).third === 1 ? true : undefined));
    expect(ranOf(group, 0)).toEqual({ first: 1, second: 2, third: 1 });
    const resumed = finishedBy.get(`${group}:0`)!;
    expect(resumed).not.toBe(workflowRunId);
    expect(await ended([resumed])).toEqual(["RUN_SUCCESS"]);
    expect((await runStates([workflowRunId])).get(workflowRunId)).toBe("RUN_FAILED");
    expect((await app.client.dlq.list({ filter: { workflowRunId } })).messages).toEqual([]);
    expect((await dispatch.api(`/v2/dlq/${entry.dlqId}`)).status).toBe(404);
  });
});

describe("workflow DLQ", () => {
  it("bulk-resumes 55 failed runs, 50 per request, with overrides, keeping completed steps", async () => {
    failing.add("bulk");
    const url = app.url("/bulk");
    await app.client.trigger(Array.from({ length: 55 }, (_, n) => ({ url, body: { group: "bulk", n }, retries: 0 })));
    const entries = await dlqEntries(url, 55);
    expect(entries.every((entry) => entry.workflowUrl === url && entry.responseStatus === 500)).toBe(true);
    const originals = entries.map((entry) => entry.workflowRunId);
    failing.delete("bulk");

    const overrides = { "Upstash-Retries": "2", "Upstash-Flow-Control-Key": "resumed", "Upstash-Flow-Control-Value": "parallelism=20" };
    const query = `workflowUrl=${encodeURIComponent(url)}`;
    const first = await dispatch.api(`/v2/workflows/dlq/resume?${query}`, { method: "POST", headers: overrides });
    expect(first.status).toBe(200);
    const page1 = await first.json();
    expect(page1.workflowRuns).toHaveLength(50);
    expect(page1.cursor).toEqual(expect.any(String));
    const second = await dispatch.api(`/v2/workflows/dlq/resume?${query}&cursor=${page1.cursor}`, { method: "POST", headers: overrides });
    const page2 = await second.json();
    expect(page2.workflowRuns).toHaveLength(5);
    expect(page2).not.toHaveProperty("cursor");

    const resumed = [...page1.workflowRuns, ...page2.workflowRuns] as { workflowRunId: string; workflowCreatedAt: number }[];
    expect(new Set(resumed.map((run) => run.workflowRunId)).size).toBe(55);
    expect(resumed.every((run) => run.workflowRunId.startsWith("wfr_") && !originals.includes(run.workflowRunId))).toBe(true);
    expect(await ended(resumed.map((run) => run.workflowRunId))).toEqual(Array(55).fill("RUN_SUCCESS"));

    const runs = await storedRuns(dispatch, { runIds: resumed.map((run) => run.workflowRunId) });
    for (const run of runs) {
      expect(run.config).toMatchObject({ maxRetries: 2, flowControl: { key: "resumed", value: "parallelism=20" } });
      expect(resumed.find((r) => r.workflowRunId === run.runId)!.workflowCreatedAt).toBe(run.createdAt.getTime());
    }
    // The completed first step was kept, not run again; the failed second step ran again and the run went on.
    for (let n = 0; n < 55; n++) expect(ranOf("bulk", n)).toEqual({ first: 1, second: 2, third: 1 });
    expect(new Set((await runStates(originals)).values())).toEqual(new Set(["RUN_FAILED"]));
    expect((await app.client.dlq.list({ filter: { workflowUrl: url } })).messages).toEqual([]);
  }, 120_000);

  it("lists, reads and deletes an entry", async () => {
    const { workflowRunId, entry } = await failedRun("delete");
    expect(entry).toMatchObject({
      workflowRunId,
      workflowUrl: app.url("/flaky"),
      url: app.url("/flaky"),
      method: "POST",
      responseStatus: 500,
      maxRetries: 0,
      failureCallback: app.url("/flaky"),
    });
    expect(entry.responseBody).toContain("second step of delete fails");
    expect(entry.workflowCreatedAt).toEqual(expect.any(Number));
    const byCreatedAt = await app.client.dlq.list({ filter: { workflowCreatedAt: entry.workflowCreatedAt, workflowRunId } });
    expect(byCreatedAt.messages.map((m) => m.dlqId)).toEqual([entry.dlqId]);

    const read = await dispatch.api(`/v2/workflows/dlq/${entry.dlqId}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ dlqId: entry.dlqId, workflowRunId });

    expect(await app.client.dlq.delete(entry.dlqId)).toMatchObject({ deleted: 1 });
    expect((await dispatch.api(`/v2/workflows/dlq/${entry.dlqId}`)).status).toBe(404);
    expect((await app.client.dlq.list({ filter: { workflowRunId } })).messages).toEqual([]);
    expect((await runStates([workflowRunId])).get(workflowRunId)).toBe("RUN_FAILED");
  });

  it("resumes one run with the SDK: completed steps are not run again", async () => {
    const { workflowRunId, entry } = await failedRun("sdk-resume");
    expect(ranOf("sdk-resume", 0)).toEqual({ first: 1, second: 1, third: 0 });
    failing.delete("sdk-resume");
    const { workflowRuns, cursor } = await app.client.dlq.resume(entry.dlqId);
    expect(cursor).toBeUndefined();
    expect(workflowRuns).toHaveLength(1);
    const resumedId = workflowRuns[0]!.workflowRunId;
    expect(resumedId).not.toBe(workflowRunId);
    expect(await ended([resumedId])).toEqual(["RUN_SUCCESS"]);
    expect(ranOf("sdk-resume", 0)).toEqual({ first: 1, second: 2, third: 1 });
    const run = await storedRun(dispatch, resumedId);
    expect(run!.response).toBe('"one-two"');
    expect((await app.client.dlq.list({ filter: { workflowRunId } })).messages).toEqual([]);
  });

  it("resumes a parallel group: the failed branch and the still-sleeping one run again", async () => {
    failing.add("parallel");
    const { workflowRunId } = await app.client.trigger({ url: app.url("/parallel"), retries: 0 });
    const [entry] = await dlqEntries(app.url("/parallel"), 1);
    expect(entry!.workflowRunId).toBe(workflowRunId);
    failing.delete("parallel");
    const { workflowRuns } = await app.client.dlq.resume({ dlqIds: [entry!.dlqId] });
    const resumedId = workflowRuns[0]!.workflowRunId;
    expect(await ended([resumedId])).toEqual(["RUN_SUCCESS"]);
    expect(ranOf("parallel", 0)).toMatchObject({ second: 2, third: 1 });
    const run = await storedRun(dispatch, resumedId);
    expect(JSON.parse(run!.response!)).toEqual(["quick", "flaky", "napped"]);
  });

  it("keeps a step whose delivery was recorded after the run's failure cancelled it", async () => {
    const { workflowRunId, entry } = await failedRun("late-record");
    failing.delete("late-record");
    // What a race leaves (seen in this file's runs): the init call was delivered and logged, but its outcome
    // waited in the recorder's batch while the failing step's outcome failed the run, which cancelled the
    // run's messages still pending, the init among them.
    const [run] = await dispatch.service.sql<{ pk: number; project: string }[]>`
      select pk, project from dispatch.workflow_runs where run_id = ${workflowRunId}`;
    const cancelled = await dispatch.service.sql`
      update dispatch.messages set state = 'CANCELED'
      where project = ${run!.project} and workflow_run_pk = ${run!.pk} and state = 'DELIVERED' and workflow_call_type = 'step'
      returning id`;
    expect(cancelled).toHaveLength(1);
    const resumed = await dispatch.api(`/v2/workflows/dlq/resume/${entry.dlqId}`, { method: "POST" });
    expect(resumed.status).toBe(200);
    expect(await ended([(await resumed.json()).workflowRunId])).toEqual(["RUN_SUCCESS"]);
    expect(ranOf("late-record", 0)).toEqual({ first: 1, second: 2, third: 1 });
  });

  it("resumes by id in the path and by a JSON body of ids", async () => {
    const one = await failedRun("rest-resume-1");
    const two = await failedRun("rest-resume-2");
    failing.delete("rest-resume-1");
    failing.delete("rest-resume-2");
    const single = await dispatch.api(`/v2/workflows/dlq/resume/${one.entry.dlqId}`, { method: "POST" });
    expect(single.status).toBe(200);
    const started = await single.json();
    expect(started).toEqual({ workflowRunId: expect.stringMatching(/^wfr_/), workflowCreatedAt: expect.any(Number) });
    const bulk = await dispatch.api("/v2/workflows/dlq/resume", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Svc-Retries": "4", "Svc-Flow-Control-Key": "native", "Svc-Flow-Control-Value": "rate=10" },
      body: JSON.stringify({ dlqIds: [two.entry.dlqId, one.entry.dlqId] }),
    });
    // The first entry was resumed already and is gone.
    const { workflowRuns } = await bulk.json();
    expect(workflowRuns).toHaveLength(1);
    expect(await ended([started.workflowRunId, workflowRuns[0].workflowRunId])).toEqual(["RUN_SUCCESS", "RUN_SUCCESS"]);
    expect(ranOf("rest-resume-1", 0)).toEqual({ first: 1, second: 2, third: 1 });
    expect(ranOf("rest-resume-2", 0)).toEqual({ first: 1, second: 2, third: 1 });
    const run = await storedRun(dispatch, workflowRuns[0].workflowRunId);
    expect(run!.config).toMatchObject({ maxRetries: 4, flowControl: { key: "native", value: "rate=10" } });
    expect((await dispatch.api(`/v2/workflows/dlq/resume/${one.entry.dlqId}`, { method: "POST" })).status).toBe(404);
  });

  it("resumes by run id prefix, with a new label", async () => {
    const { workflowRunId } = await failedRun("prefix");
    failing.delete("prefix");
    const path = `/v2/workflows/dlq/resume?workflowRunId=${workflowRunId.slice(0, -3)}`;
    // A flow-control value alone needs a key to keep, and the run has no flow control.
    const refused = await dispatch.api(path, { method: "POST", headers: { "Upstash-Flow-Control-Value": "rate=1" } });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatch(/flow-control-key/);
    const response = await dispatch.api(path, { method: "POST", headers: { "Upstash-Label": "resumed" } });
    const { workflowRuns } = await response.json();
    expect(workflowRuns).toHaveLength(1);
    expect(await ended([workflowRuns[0].workflowRunId])).toEqual(["RUN_SUCCESS"]);
    const run = await storedRun(dispatch, workflowRuns[0].workflowRunId);
    expect(run!.labels).toEqual(["resumed"]);
  });

  it("restarts a run from the beginning", async () => {
    const { entry } = await failedRun("restart");
    failing.delete("restart");
    const { workflowRuns } = await app.client.dlq.restart(entry.dlqId, { retries: 1 });
    expect(await ended([workflowRuns[0]!.workflowRunId])).toEqual(["RUN_SUCCESS"]);
    expect(ranOf("restart", 0)).toEqual({ first: 2, second: 2, third: 1 });
    const run = await storedRun(dispatch, workflowRuns[0]!.workflowRunId);
    expect(run!.config).toMatchObject({ maxRetries: 1 });
  });

  it("retries a failure function that failed, and refuses when it did not fail", async () => {
    const { entry: succeeded } = await failedRun("callback-ok");
    await until("the failure callback to succeed", async () => {
      const [message] = (await app.client.dlq.list({ filter: { workflowRunId: succeeded.workflowRunId } })).messages;
      return message?.failureCallbackInfo?.state === "CALLBACK_SUCCESS" ? message : undefined;
    });
    await expect(app.client.dlq.retryFailureFunction({ dlqId: succeeded.dlqId })).rejects.toThrow(/has not failed/);

    const { workflowRunId } = await app.client.trigger({ url: app.url("/failure-fn"), retries: 0 });
    const entry = await until("the failure function to fail", async () => {
      const { messages } = await app.client.dlq.list({ filter: { workflowRunId, failureFunctionState: "CALLBACK_FAIL" } });
      return messages[0];
    });
    expect(entry.failureCallbackInfo).toMatchObject({ state: "CALLBACK_FAIL", responseStatus: 500 });
    failureFunctionFails = false;
    const retried = await app.client.dlq.retryFailureFunction({ dlqId: entry.dlqId });
    expect(retried).toMatchObject({ workflowRunId, workflowCreatedAt: entry.workflowCreatedAt });
    expect(await until("the failure function", () => seen.get(`failure-fn:${workflowRunId}`))).toBe(500);
    await until("CALLBACK_SUCCESS", async () => {
      const run = await storedRun(dispatch, workflowRunId);
      return run!.failureCallbackState === "CALLBACK_SUCCESS" ? true : undefined;
    });
  });
});

describe("bulk cancel of runs", () => {
  /** Triggers runs that wait an hour before their first delivery, so they stay active. */
  const triggerWaiting = async (paths: string[], label?: string) =>
    (await app.client.trigger(paths.map((path) => ({ url: app.url(path), delay: "1h" as const, ...(label && { label }) })))).map(
      (run) => run.workflowRunId,
    );

  it("cancels by ids, URL prefix, exact URL, label, legacy body and all, counting only runs it cancelled", async () => {
    const [a, b] = await triggerWaiting(["/cancel/ids", "/cancel/ids"]);
    expect(await app.client.cancel({ ids: [a!, b!, "wfr_unknown"] })).toEqual({ cancelled: 2 });
    expect(await app.client.cancel({ ids: [a!, b!] })).toEqual({ cancelled: 0 });
    expect(await ended([a!, b!])).toEqual(["RUN_CANCELED", "RUN_CANCELED"]);

    await triggerWaiting(["/cancel/prefix/one", "/cancel/prefix/two", "/cancel/prefixed-sibling", "/cancel/exact"]);
    expect(await app.client.cancel({ urlStartingWith: app.url("/cancel/prefix/") })).toEqual({ cancelled: 2 });
    expect(await app.client.cancel({ filter: { workflowUrl: app.url("/cancel/exact/") } })).toEqual({ cancelled: 0 });
    expect(await app.client.cancel({ filter: { workflowUrl: app.url("/cancel/exact") } })).toEqual({ cancelled: 1 });

    await triggerWaiting(["/cancel/labelled", "/cancel/labelled"], "batch-7");
    expect(await app.client.cancel({ filter: { label: "batch-7" } })).toEqual({ cancelled: 2 });

    const [legacy] = await triggerWaiting(["/cancel/legacy"]);
    const response = await dispatch.api("/v2/workflows/runs", {
      method: "DELETE",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ workflowRunIds: [legacy] }),
    });
    expect(await response.json()).toEqual({ cancelled: 1 });

    await triggerWaiting(["/cancel/all/1", "/cancel/all/2", "/cancel/all/3"]);
    // What is left active: the prefixed sibling and these three.
    expect(await app.client.cancel({ all: true })).toEqual({ cancelled: 4 });
    expect(await app.client.cancel({ all: true })).toEqual({ cancelled: 0 });
    const cancelled = await storedRuns(dispatch, { urlLike: `${app.baseUrl}/cancel/%` });
    const pending = await messagesWhere(dispatch, {
      workflowRunIds: cancelled.map((run) => run.runId),
      states: ["CREATED", "RETRY"],
    });
    expect(pending).toEqual([]);
  });
});

describe("REST trigger", () => {
  it("starts a run without an SDK, with forwarded headers, label and retries", async () => {
    const response = await fetch(`${dispatch.baseUrl}/v2/trigger/${app.url("/rest")}`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${TEST_TOKEN}`,
        "Content-Type": "application/json",
        "Upstash-Forward-X-Trace": "trace-1",
        "Upstash-Label": "from-rest",
        "Upstash-Retries": "1",
        "Upstash-Workflow-RunId": "wfr_rest-trigger-1",
      },
      body: JSON.stringify({ name: "rest" }),
    });
    expect(response.status).toBe(200);
    const started = (await response.json()) as { workflowRunId: string; workflowCreatedAt: number };
    expect(started).toEqual({ workflowRunId: "wfr_rest-trigger-1", workflowCreatedAt: expect.any(Number) });
    expect(await until("the run to report", () => seen.get("rest:wfr_rest-trigger-1"))).toEqual({
      greeting: "hello rest",
      trace: "trace-1",
      label: "from-rest",
    });
    expect(await ended([started.workflowRunId])).toEqual(["RUN_SUCCESS"]);
    const run = await storedRun(dispatch, started.workflowRunId);
    expect(run).toMatchObject({ labels: ["from-rest"], config: { maxRetries: 1, failureCallback: app.url("/rest") } });
    expect(run!.createdAt.getTime()).toBe(started.workflowCreatedAt);
  });

  it("generates a run id when none is given", async () => {
    const response = await fetch(`${dispatch.baseUrl}/v2/trigger/${app.url("/rest")}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TEST_TOKEN}` },
      body: JSON.stringify({ name: "anonymous" }),
    });
    const { workflowRunId } = (await response.json()) as { workflowRunId: string };
    expect(workflowRunId).toMatch(/^wfr_/);
    expect(await until("the run to report", () => seen.get(`rest:${workflowRunId}`))).toMatchObject({ greeting: "hello anonymous" });
    expect(await ended([workflowRunId])).toEqual(["RUN_SUCCESS"]);
  });
});
