/**
 * A wait and a notify of one run that cross: the wait's transaction has added
 * its waiter but not committed when a webhook (a notify by run id) arrives.
 * The notify must either find the waiter or leave a notification the wait
 * takes; neither may miss the other, or the run sleeps until its timeout.
 * The wait's transaction is held open by the test, so the crossing is made,
 * not hoped for. (The step body is the test's own, not an SDK's: what is
 * checked is what the wait and the notify leave in the database.)
 */
import { expect, it } from "vitest";
import { DEFAULT_PROJECT } from "../../src/db/vocabulary";
import { messageSettings } from "../../src/domain/publish/options";
import { registerWait } from "../../src/domain/workflows/waits";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { messagesWhere, notificationCount, waiterCount } from "../support/rows";
import { request, useDispatch } from "../support/service";
import { startActiveRun, unfinishedRun } from "../support/workflow-app";

const dispatch = useDispatch();
const receiver = useReceiver(unfinishedRun);

/** Whether a statement of this database is waiting for a lock. */
const someoneWaitsForALock = async () =>
  (await dispatch.service.sql`
    select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`).length > 0;

it("a webhook that arrives while a wait is being registered resumes the run", async () => {
  const workflowRunId = await startActiveRun(dispatch, receiver);
  const eventId = "evt_crossing";
  let commitWait!: () => void;
  const waitMayCommit = new Promise<void>((resolve) => (commitWait = resolve));
  let waiterAdded!: () => void;
  const added = new Promise<void>((resolve) => (waiterAdded = resolve));
  const waiting = dispatch.service.sql.begin(async (tx) => {
    const step = { stepId: 2, stepName: "wait", stepType: "Wait", concurrent: 1 };
    const headers = { "svc-workflow-runid": workflowRunId, "content-type": "application/json" };
    await registerWait(tx, DEFAULT_PROJECT, eventId, { url: `${receiver.url}/workflow`, timeout: "1h", step }, headers, "svc", messageSettings(dispatch.config));
    waiterAdded();
    await waitMayCommit;
  });
  await added;

  // The webhook comes now: it waits for the run's lock (or, were the two not ordered, stores a notification at once).
  let answered = false;
  const hook = request(`${dispatch.baseUrl}/v2/workflows/hooks/test-user/${workflowRunId}/${eventId}`, { method: "POST", body: "crossed" })
    .finally(() => (answered = true));
  await poll(async () => answered || (await someoneWaitsForALock()), "the webhook to wait for the run's lock or to answer");
  commitWait();
  await waiting;
  expect((await hook).status).toBe(200);

  // The waiter was resolved: no waiter and no stored notification are left, and the continuation carries the call.
  expect(await waiterCount(dispatch, eventId)).toBe(0);
  expect(await notificationCount(dispatch, { eventId })).toBe(0);
  const [continued] = await messagesWhere(dispatch, { bodyContains: `"waitEventId":"${eventId}"` });
  const step = JSON.parse(continued!.body.toString());
  expect(step).toMatchObject({ waitEventId: eventId, waitTimeout: false });
  // A webhook's event is the request it received (§7.5), its body in base64.
  expect(JSON.parse(Buffer.from(step.out, "base64").toString())).toMatchObject({ method: "POST", body: Buffer.from("crossed").toString("base64") });
});
