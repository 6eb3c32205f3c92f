/**
 * The metrics and logs of what belongs to a project carry it: publishes,
 * outcomes, what waits and the DLQ by `project` label (bounded: past the
 * first projects a process counts, the rest are summed under `other`), and
 * the request log line names the project of the token that called.
 */
import { expect, it } from "vitest";
import { OTHER_PROJECTS, ProjectLabels } from "../../src/observability/project-label";
import { poll } from "../support/poll";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";
import { seriesValue } from "../support/metrics-text";

const lines: Record<string, unknown>[] = [];
const dispatch = useDispatch({}, { log: (message, fields) => lines.push({ message, ...fields }) });
const acme = useProject(dispatch, "acme");
const receiver = useReceiver((r) => (r.path === "/down" ? { status: 500, body: "down" } : { status: 200, body: "ok" }));

it("labels publishes, outcomes and the DLQ with their project, and logs a request with its token's project", async () => {
  const publish = (api: typeof dispatch.api, path: string) =>
    api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers: { "Svc-Retries": "0" }, body: path });
  for (const path of ["/a1", "/a2", "/down"]) expect((await publish(acme.api, path)).status).toBe(200);
  expect((await publish(dispatch.api, "/d1")).status).toBe(200);

  const scrape = async () => (await dispatch.api("/metrics")).text();
  const text = await poll(async () => {
    const scraped = await scrape();
    return seriesValue(scraped, "dispatch_dlq_size", { project: "acme" }) === 1 &&
      seriesValue(scraped, "dispatch_delivery_outcomes_total", { project: "default", outcome: "delivered" }) === 1 &&
      seriesValue(scraped, "dispatch_delivery_outcomes_total", { project: "acme", outcome: "delivered" }) === 2 && scraped;
  }, "acme's failure in the DLQ and every outcome counted");
  expect(seriesValue(text, "dispatch_messages_published_total", { project: "acme", destination: "url" })).toBe(3);
  expect(seriesValue(text, "dispatch_messages_published_total", { project: "default", destination: "url" })).toBe(1);
  expect(seriesValue(text, "dispatch_delivery_outcomes_total", { project: "acme", outcome: "failed" })).toBe(1);
  expect(seriesValue(text, "dispatch_dlq_size", { project: "default" })).toBe(0);
  expect(seriesValue(text, "dispatch_messages_waiting", { project: "default" })).toBe(0);

  const logged = (project: string) => lines.some((line) => line.project === project && String(line.message).startsWith("POST /v2/publish/*"));
  expect([logged("acme"), logged("default")]).toEqual([true, true]);
  expect(lines.some((line) => line.project === "acme" && String(line.message).startsWith("attempt of "))).toBe(true);
});

it("names the first projects a process counts, and sums the rest under other", () => {
  const labels = new ProjectLabels(2);
  expect(["default", "acme", "zeta", "acme", "omega", "default"].map((p) => labels.of(p))).toEqual([
    "default", "acme", OTHER_PROJECTS, "acme", OTHER_PROJECTS, "default",
  ]);
});
