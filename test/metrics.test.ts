/**
 * `GET /metrics` in Prometheus text format: readable with any access token or
 * the metrics-only token (which opens nothing else); counters move with what
 * happens, gauges read the database at scrape time.
 */
import { describe, expect, it } from "vitest";
import { TestClock } from "./support/clock";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { startTestService, useDispatch } from "./support/service";
import { seriesValue } from "./support/metrics-text";

const METRICS_TOKEN = "metrics-only-token-0123456789";
const clock = new TestClock();
const dispatch = useDispatch({ metricsToken: METRICS_TOKEN }, { now: clock.now });
const receiver = useReceiver();

async function scrape(token?: string) {
  const response = token === undefined ? await dispatch.api("/metrics") : await fetch(`${dispatch.baseUrl}/metrics`, {
    headers: token === "" ? {} : { Authorization: `Bearer ${token}` },
  });
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

describe("metrics", () => {
  it("needs a token; the metrics token reads them and nothing else", async () => {
    expect((await scrape("")).status).toBe(401);
    expect((await scrape("wrong")).status).toBe(401);
    const scraped = await scrape(METRICS_TOKEN);
    expect(scraped.status).toBe(200);
    expect(scraped.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const v2 = await fetch(`${dispatch.baseUrl}/v2/queues`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(v2.status).toBe(401);
  });

  it("count publishes, duplicates, outcomes and request durations, and read gauges from the database", async () => {
    const publish = (path: string, headers: Record<string, string> = {}) =>
      dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body: "x" });
    await publish("/one");
    await publish("/dedup", { "Upstash-Deduplication-Id": "same" });
    await publish("/dedup", { "Upstash-Deduplication-Id": "same" });
    await publish("/failing", { "Svc-Retries": "0" }).then(() => undefined);
    await dispatch.api("/v2/publish/http://127.0.0.1:9/dead", { method: "POST", headers: { "Svc-Retries": "0" } });
    await dispatch.api("/v2/enqueue/metrics-queue/http://127.0.0.1:9/paused", { method: "POST" });
    await dispatch.api("/v2/queues/metrics-queue/pause", { method: "POST" });
    const text = await poll(async () => {
      const { text } = await scrape();
      return (seriesValue(text, "dispatch_delivery_outcomes_total", { outcome: "failed" }) ?? 0) >= 1 &&
        (seriesValue(text, "dispatch_dlq_size") ?? 0) >= 1 && text;
    }, "a failed delivery in the metrics");
    expect(seriesValue(text, "dispatch_messages_published_total", { dialect: "svc", destination: "url" })).toBeGreaterThanOrEqual(3);
    expect(seriesValue(text, "dispatch_messages_published_total", { dialect: "upstash", destination: "url" })).toBe(1);
    expect(seriesValue(text, "dispatch_messages_deduplicated_total", { dialect: "upstash", destination: "url" })).toBe(1);
    expect(seriesValue(text, "dispatch_delivery_outcomes_total", { outcome: "delivered" })).toBeGreaterThanOrEqual(2);
    expect(seriesValue(text, "dispatch_delivery_attempt_duration_seconds_count")).toBeGreaterThanOrEqual(3);
    expect(seriesValue(text, "dispatch_http_request_duration_seconds_count", { method: "POST", route: "/v2/publish/*", status: "200" })).toBeGreaterThanOrEqual(3);
    expect(seriesValue(text, "dispatch_queue_lag", { queue: "metrics-queue" })).toBeGreaterThanOrEqual(0);
    expect(seriesValue(text, "dispatch_messages_waiting")).toBeGreaterThanOrEqual(0);
    expect(seriesValue(text, "dispatch_messages_in_flight")).toBeGreaterThanOrEqual(0);
    expect(seriesValue(text, "dispatch_database_connections", { state: "idle" })).toBeGreaterThanOrEqual(1);
    expect(seriesValue(text, "dispatch_worker_heartbeat_age_seconds")).toBeLessThan(dispatch.config.workerDeadAfterMs / 1000);
    expect(seriesValue(text, "dispatch_process_resident_memory_bytes")).toBeGreaterThan(0);
  });

  it("carry the process's runtime series once, in every service the process runs", async () => {
    const second = await startTestService({ metricsToken: METRICS_TOKEN }, { role: "api" });
    try {
      const texts = [(await scrape()).text, await (await second.api("/metrics")).text()];
      for (const text of texts) {
        for (const name of ["dispatch_process_cpu_user_seconds_total", "dispatch_nodejs_eventloop_lag_p99_seconds"]) {
          expect(text.split("\n").filter((line) => line.startsWith(`${name} `)), name).toHaveLength(1);
        }
        expect(seriesValue(text, "dispatch_nodejs_eventloop_lag_p99_seconds")).toBeGreaterThan(0);
      }
      // The second service's own series are its own: it published nothing.
      expect(seriesValue(texts[1]!, "dispatch_messages_published_total")).toBeUndefined();
    } finally {
      await second.stop();
    }
  });

  it("count schedule ticks fired", async () => {
    const response = await dispatch.api(`/v2/schedules/${receiver.url}/tick`, { method: "POST", headers: { "Svc-Cron": "* * * * *" } });
    const { scheduleId } = await response.json();
    const { nextScheduleTime } = await (await dispatch.api(`/v2/schedules/${scheduleId}`)).json();
    await clock.moveTo(dispatch, nextScheduleTime + 5);
    await poll(async () => seriesValue((await scrape()).text, "dispatch_schedule_ticks_fired_total") === 1, "one tick counted");
  });
});
