/**
 * The tokenless webhook route of waiting runs (`/v2/workflows/hooks/{userId}/{runId}/{eventId}`)
 * cannot be used to fill the database: a call for a run that does not exist
 * or has ended answers 404 and stores nothing; a lookback notification for a
 * live run is kept, but at most MAX_PENDING_NOTIFICATIONS per run, and is
 * removed once expired or once its run ends.
 */
import { describe, expect, it } from "vitest";
import { MAX_PENDING_NOTIFICATIONS, purgeStaleNotifications } from "../../src/domain/workflows/waits";
import { useReceiver } from "../support/receiver";
import { notificationCount } from "../support/rows";
import { request, useDispatch } from "../support/service";
import { startActiveRun, unfinishedRun } from "../support/workflow-app";

const dispatch = useDispatch();
const receiver = useReceiver(unfinishedRun);

const hook = (runId: string, eventId: string, body = "payload") =>
  request(`${dispatch.baseUrl}/v2/workflows/hooks/test-user/${runId}/${eventId}`, { method: "POST", body });

const notifications = (runId?: string) => notificationCount(dispatch, { runId });

const activeRun = () => startActiveRun(dispatch, receiver);

describe("the workflow webhook route", () => {
  it("answers 404 and stores nothing for a run that does not exist, or for an unknown user", async () => {
    const before = await notifications();
    const response = await hook("wfr_no_such_run", "evt_1", "x".repeat(100_000));
    expect(response.status).toBe(404);
    expect((await response.json()).error).toMatch(/does not exist or has ended/);
    expect((await request(`${dispatch.baseUrl}/v2/workflows/hooks/someone-else/wfr_x/evt_1`, { method: "POST" })).status).toBe(404);
    expect(await notifications()).toBe(before);
  });

  it("keeps a lookback notification for a live run, up to the cap, then answers 429", async () => {
    const runId = await activeRun();
    for (let i = 0; i < MAX_PENDING_NOTIFICATIONS; i++) expect((await hook(runId, `evt_${i}`)).status).toBe(200);
    const over = await hook(runId, "evt_over");
    expect(over.status).toBe(429);
    expect((await over.json()).error).toMatch(/notifications/);
    expect(await notifications(runId)).toBe(MAX_PENDING_NOTIFICATIONS);
  });

  it("answers 404 once the run has ended, and its pending notifications are purged", async () => {
    const runId = await activeRun();
    expect((await hook(runId, "evt_early")).status).toBe(200);
    const cancelled = await dispatch.api(`/v2/workflows/runs/${runId}`, { method: "DELETE" });
    expect(cancelled.status, await cancelled.clone().text()).toBe(200);
    expect((await hook(runId, "evt_late")).status).toBe(404);
    expect(await purgeStaleNotifications(dispatch.service.sql)).toBeGreaterThanOrEqual(1);
    expect(await notifications(runId)).toBe(0);
  });

  it("purges notifications older than their time to live", async () => {
    const runId = await activeRun();
    expect((await hook(runId, "evt_old")).status).toBe(200);
    await dispatch.service.sql`update dispatch.workflow_notifications set created_at = now() - interval '25 hours' where run_id = ${runId}`;
    await purgeStaleNotifications(dispatch.service.sql);
    expect(await notifications(runId)).toBe(0);
  });
});
