/**
 * A real Prometheus (Debian's `prometheus`) scrapes a running Dispatch with a
 * metrics token, as deploy/monitoring/README.md configures it, and loads
 * alerts.yml: every metric the Grafana dashboard and the alert rules name is
 * a series it holds, and every rule evaluates without error. The service is
 * made to publish, deliver, fail and open a circuit first, so that the series
 * that appear only once something happened exist too.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../../src/db/embedded/cluster";
import { poll } from "../support/poll";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const MONITORING = fileURLToPath(new URL("../../deploy/monitoring/", import.meta.url));
const METRICS_TOKEN = "prometheus-scrape-token-0123456789";
const dispatch = useDispatch({ metricsToken: METRICS_TOKEN, circuitFailures: 2, circuitFailureRate: 0.5 });
const receiver = useReceiver((request) => (request.path.startsWith("/down") ? { status: 503, body: "down" } : { status: 200, body: "ok" }));

let prometheus: ChildProcess | undefined;
let output = "";
let api = "";
let dir = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dispatch-prometheus-"));
  const port = await freePort();
  api = `http://127.0.0.1:${port}/api/v1`;
  const target = new URL(dispatch.baseUrl).host;
  writeFileSync(join(dir, "prometheus.yml"), [
    "global: { scrape_interval: 1s, evaluation_interval: 1s }",
    `rule_files: ["${join(MONITORING, "alerts.yml")}"]`,
    "scrape_configs:",
    "  - job_name: dispatch",
    `    authorization: { credentials: "${METRICS_TOKEN}" }`,
    `    static_configs: [{ targets: ["${target}"] }]`,
  ].join("\n"));
  prometheus = spawn("prometheus", [
    `--config.file=${join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=warn",
  ], { stdio: ["ignore", "pipe", "pipe"] });
  for (const stream of [prometheus.stdout!, prometheus.stderr!]) stream.on("data", (chunk) => void (output = (output + chunk).slice(-4000)));
  try {
    await once(prometheus, "spawn");
  } catch (error) {
    throw new Error(`could not run prometheus (Debian's prometheus package; .ci/run installs it): ${(error as Error).message}`);
  }
});

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null && prometheus.signalCode === null) {
    const exited = once(prometheus, "exit");
    prometheus.kill("SIGKILL");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const query = async (path: string) => (await (await fetch(`${api}${path}`)).json()) as { status: string; data: unknown };

/** Prometheus's own account, for a failure: what it printed, and whether it still runs. */
const account = () => `${prometheus?.exitCode === null ? "running" : `exited ${prometheus?.exitCode ?? prometheus?.signalCode}`}; it printed:\n${output}`;

/** Every `dispatch_*` metric and `up` that `expressions` name (a histogram by its `_bucket`, `_sum` or `_count` series, as stored). */
function namedMetrics(expressions: string[]): Set<string> {
  return new Set(expressions.flatMap((expression) => [...expression.matchAll(/\b(dispatch_[a-z_]+|up)\b/g)].map((m) => m[1]!)));
}

/** The PromQL of the dashboard: each panel's queries and the variables' (the `project` variable reads a series too). */
function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(join(MONITORING, "grafana-dashboard.json"), "utf8")) as {
    panels: { targets?: { expr: string }[] }[];
    templating: { list: { definition?: string }[] };
  };
  return [
    ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
    ...dashboard.templating.list.flatMap((variable) => (variable.definition ? [variable.definition] : [])),
  ];
}

interface Rule {
  name: string;
  query: string;
  health: string;
  lastError?: string;
}
const rules = async () => ((await query("/rules")).data as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);

it("holds every series the dashboard and the rules name, and evaluates every rule", async () => {
  // A queue and a workflow run, so that their gauges have series; then publish, deliver and fail
  // (a circuit opens on the failing destination), so that every counter has series.
  expect((await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "orders", parallelism: 1 }) })).status).toBe(200);
  expect((await dispatch.api(`/v2/trigger/${receiver.url}/workflow`, { method: "POST", body: "{}" })).status).toBe(200);
  for (const path of ["/up-1", "/up-2", "/down-1", "/down-2", "/down-3", "/down-4"]) {
    const response = await dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers: { "Svc-Retries": "0" }, body: path });
    expect(response.status).toBe(200);
  }
  await poll(async () => (await (await dispatch.api("/metrics")).text()).includes('dispatch_destination_circuit_changes_total{to="OPEN"}'), "a circuit to open");

  // The rules' expressions as Prometheus read them from alerts.yml.
  const loaded = await poll(async () => {
    const found = await rules().catch(() => []);
    return found.length > 0 && found;
  }, async () => `Prometheus to answer with the rules (${account()})`);
  expect(loaded.map((rule) => rule.name)).toHaveLength(8);
  const names = namedMetrics([...dashboardExpressions(), ...loaded.map((rule) => rule.query)]);
  expect(names).toContain("dispatch_messages_overdue_seconds");
  expect(names).toContain("dispatch_delivery_attempt_duration_seconds_bucket");
  expect(names).toContain("up");
  const missing = async () => {
    const absent: string[] = [];
    for (const name of names) {
      const { data } = await query(`/series?match[]=${encodeURIComponent(name)}`);
      if ((data as unknown[]).length === 0) absent.push(name);
    }
    return absent;
  };
  await poll(async () => (await missing()).length === 0, async () => `every named series in Prometheus (missing: ${(await missing()).join(", ")}; ${account()})`, 30_000);

  const { data } = await query("/targets");
  expect((data as { activeTargets: { health: string; labels: { job: string } }[] }).activeTargets).toMatchObject([{ health: "up", labels: { job: "dispatch" } }]);
  await poll(async () => (await rules()).every((rule) => rule.health === "ok"), async () => `every rule evaluated (${JSON.stringify(await rules())})`);
}, 90_000);
