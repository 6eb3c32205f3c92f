/**
 * What every request passes through in one pass (http/server/every-request.ts):
 * an id, the input check, the browsers' headers, its duration measured and
 * logged. A request the input check refuses is answered like any other: with
 * its id and nosniff (a page with its protections), counted and logged with
 * its 400; the access line is not built when debug lines go nowhere.
 */
import { Hono } from "hono";
import { Histogram } from "prom-client";
import { describe, expect, it } from "vitest";
import { everyRequest } from "../src/http/server/every-request";
import { createLog, type Log, type LogFields } from "../src/observability/log";
import { seriesValue } from "./support/metrics-text";
import { request, useDispatch } from "./support/service";

const lines: { line: string; fields?: LogFields }[] = [];
const dispatch = useDispatch({}, { log: (line, fields) => lines.push({ line, fields }) });

describe("every request", () => {
  it("a refused input is answered with its id and nosniff, counted and logged with its 400", async () => {
    const refused = await dispatch.api("/v2/messages/%FF", { headers: { "X-Request-Id": "refused-input-1" } });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatch(/path parameter "id"/);
    expect(refused.headers.get("x-request-id")).toBe("refused-input-1");
    expect(refused.headers.get("x-content-type-options")).toBe("nosniff");
    const access = lines.find((entry) => entry.fields?.requestId === "refused-input-1");
    expect(access?.line).toMatch(/^GET \/v2\/messages\/:id 400 in \d+\.\d ms$/);
    expect(access?.fields?.level).toBe("debug");

    const scrape = await (await dispatch.api("/metrics")).text();
    const labels = { method: "GET", route: "/v2/messages/:id", status: "400" };
    expect(seriesValue(scrape, "dispatch_http_request_duration_seconds_count", labels)).toBeGreaterThanOrEqual(1);
  });

  it("a page whose input is refused is a page with the browsers' protections", async () => {
    const refused = await request(`${dispatch.baseUrl}/dashboard/messages/%FF`, { redirect: "manual" });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("content-type")).toMatch(/^text\/html/);
    expect(refused.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(refused.headers.get("cache-control")).toBe("no-store");
    expect(refused.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("builds no access line for a log that does not hear debug lines, and one for a log that does", async () => {
    const heard: string[] = [];
    const requestSeconds = new Histogram({ name: "t_seconds", help: "t", labelNames: ["method", "route", "status"], registers: [] });
    const metrics = { requestSeconds };
    const quiet: Log = Object.assign((line: string) => void heard.push(line), { hears: (level: string) => level !== "debug" });
    const app = new Hono().use(everyRequest({ metrics, log: quiet }, (error, c) => c.json({ error: error.message }, 500)));
    app.get("/x", (c) => c.text("ok"));
    expect((await app.request("/x")).status).toBe(200);
    expect(heard).toEqual([]);

    expect(createLog("info", false).hears?.("debug")).toBe(false);
    expect(createLog("debug", false).hears?.("debug")).toBe(true);
    const open: Log = (line) => void heard.push(line);
    const logged = new Hono().use(everyRequest({ metrics, log: open }, (error, c) => c.json({ error: error.message }, 500)));
    logged.get("/x", (c) => c.text("ok"));
    await logged.request("/x");
    expect(heard).toEqual([expect.stringMatching(/^GET \/x 200 in /)]);
    expect((await requestSeconds.get()).values.find((v) => v.metricName === "t_seconds_count")?.value).toBe(2);
  });
});
