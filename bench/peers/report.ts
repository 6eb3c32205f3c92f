/**
 * The peers in the report: their targets (issue 39: Dispatch delivers at
 * least twice as fast as each, for at most half its CPU per delivered
 * message, in 2b of the same run), and a table of Dispatch, the minimal
 * pipeline and each peer side by side.
 */
import type { Costs } from "../costs";
import type { BenchRun, TargetCheck } from "../report";
import { COST_FIGURES, cpuPerDelivery, deliveryFaults, find, int, micros, ms, num, share, table, times } from "../report-format";
import type { ScenarioResult } from "../scenarios";
import { PEERS } from "./peers";

/** A column of the table: a service and the prefix of its scenario ids. */
interface Column {
  name: string;
  prefix: string;
}

const DISPATCH: Column = { name: "Dispatch", prefix: "" };
const COLUMNS: Column[] = [DISPATCH, { name: "minimal pipeline", prefix: "pipeline-" }, ...PEERS.map((p) => ({ name: p.service, prefix: `${p.id}-` }))];
/** The scenarios every column may have; Dispatch's are `1-publish`, `2b-delivered`, `2a-e2e`. */
const SCENARIOS = ["1-publish", "2b-delivered", "2a-e2e"];

const scenario = (run: BenchRun, column: Column, id: string) => find(run, `${column.prefix}${id}`);
const deliveredRate = (s: ScenarioResult | undefined) => s?.measurement.delivery.inWindowPerSecond ?? null;

/** Per peer whose 2b ran beside Dispatch's: delivered/s ≥ 2× and CPU per delivered message ≤ 0.5×; and the peers' exactly-once. */
export function peerTargets(run: BenchRun): TargetCheck[] {
  const dispatch = find(run, "2b-delivered");
  const checks = PEERS.flatMap((peer): TargetCheck[] => {
    const own = find(run, `${peer.id}-2b-delivered`);
    if (!dispatch || !own) return [];
    const [rate, ownRate] = [deliveredRate(dispatch)!, deliveredRate(own)!];
    const [cpu, ownCpu] = [cpuPerDelivery(dispatch), cpuPerDelivery(own)];
    const cpuRatio = cpu !== null && ownCpu ? cpu / ownCpu : null;
    return [
      {
        target: `delivered/s at saturation (2b): Dispatch ≥ 2× ${peer.service}'s`,
        measured: `${times(rate / ownRate)} (${int(rate)}/s vs ${int(ownRate)}/s)`,
        met: ownRate > 0 && rate >= 2 * ownRate,
      },
      {
        target: `CPU per delivered message, process + Postgres (2b): Dispatch ≤ 0.5× ${peer.service}'s`,
        measured: cpuRatio === null ? "n/a" : `${times(cpuRatio)} (${int(cpu!)} µs vs ${int(ownCpu!)} µs)`,
        met: cpuRatio !== null && cpuRatio <= 0.5,
      },
    ];
  });
  const peers = run.scenarios.filter((s) => PEERS.some((p) => p.service === s.service));
  if (peers.length === 0) return checks;
  const faults = peers.flatMap((s) => deliveryFaults(s.id, s.measurement));
  return [...checks, {
    target: "every accepted publish delivered exactly once by each peer (its 1, 2b and 2a)",
    measured: faults.length === 0 ? "yes" : faults.join("; "),
    met: faults.length === 0,
  }];
}

/** The comparison, when a peer ran: one column per service with its 1, 2b and 2a in this run. */
export function peersSection(run: BenchRun): string[] {
  if (!run.scenarios.some((s) => PEERS.some((p) => p.service === s.service))) return [];
  const columns = COLUMNS.filter((c) => SCENARIOS.some((id) => scenario(run, c, id)));
  const row = (figure: string, id: string, value: (s: ScenarioResult) => string) =>
    [figure, ...columns.map((c) => {
      const s = scenario(run, c, id);
      return s ? value(s) : "n/a";
    })];
  const cost = (figure: string, pick: (c: Costs) => number | null, format: (n: number | null) => string = (n) => num(n)) =>
    row(`${figure} per delivered message (2b)`, "2b-delivered", (s) => format(pick(s.measurement.costs)));
  const dispatch2b = scenario(run, DISPATCH, "2b-delivered");
  const against = (figure: string, value: (s: ScenarioResult | undefined) => number | null) =>
    row(figure, "2b-delivered", (s) => {
      const [d, own] = [value(dispatch2b), value(s)];
      return d !== null && own ? times(d / own) : "n/a";
    });
  const rows = [
    row("delivered/s, 64 in flight (2b)", "2b-delivered", (s) => `${int(deliveredRate(s)!)}/s`),
    row("publish/s while delivering (1)", "1-publish", (s) => `${int(s.measurement.publish.perSecond)}/s`),
    row(`publish → arrival p50 / p99 at ${int(run.plan.e2eRate)}/s offered (2a)`, "2a-e2e",
      (s) => `${ms(s.measurement.delivery.latency.p50)} / ${ms(s.measurement.delivery.latency.p99)}`),
    row("CPU µs, service + Postgres, per delivered message (2b)", "2b-delivered", (s) => micros(cpuPerDelivery(s))),
    ...COST_FIGURES.map(([figure, pick, format]) => cost(figure, pick, format)),
    row("HOT share of message / job table updates (2b)", "2b-delivered", (s) => share(s.measurement.costs.hotRatio)),
    row("CPU while publishing, cores of other work (2b)", "2b-delivered", (s) => num(s.measurement.cpu.otherCores)),
    against("Dispatch's delivered/s ÷ this one's (2b)", deliveredRate),
    against("Dispatch's CPU per delivered message ÷ this one's (2b)", cpuPerDelivery),
  ];
  return [
    `## Dispatch beside the peers`,
    ``,
    `The peers (bench/peers) are webhook deliverers a Node team would build on a Postgres queue library, with the pipeline's ` +
      `publish route, token check, signature and 64 requests in flight: pg-boss (\`boss.send\` per publish; workers fetching batches of 16, ` +
      `woken by \`notifyWorker\`; completions per batch) and graphile-worker (\`addJob\` per publish; concurrency 64 with its local queue ` +
      `and batched completions). Each ran 1 then 2b on one fresh database and 2a on another, as the pipeline does, with the same load ` +
      `generator and receiver in the same run. Per-message counters run from before the warm-up until the service stopped.`,
    ``,
    table(["Figure", ...columns.map((c) => c.name)], rows),
    ``,
  ];
}
