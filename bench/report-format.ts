/**
 * How the report (bench/report.ts, bench/peers/report.ts) writes figures:
 * numbers, ratios, latencies and markdown tables, and the per-message CPU
 * every comparison reads.
 */
import type { Costs } from "./costs";
import type { BenchRun } from "./report";
import type { Measurement, ScenarioResult } from "./scenarios";
import type { Percentiles } from "./stats";

export const int = (n: number) => Math.round(n).toLocaleString("en-US");
export const ratio = (a: number, b: number) => (b > 0 ? a / b : 0);
export const times = (r: number) => `${r.toFixed(2)}×`;
export const ms = (n: number | null) => (n === null ? "n/a" : `${n.toFixed(0)} ms`);
export const seconds = (n: number) => `${+(n / 1000).toFixed(1)} s`;
export const pct = (p: Percentiles) => (p.count === 0 ? "n/a" : `${ms(p.p50)} / ${ms(p.p99)} (max ${ms(p.max)})`);
export const num = (n: number | null, digits = 2) =>
  n === null ? "n/a" : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const share = (r: number | null) => (r === null ? "n/a" : `${(r * 100).toFixed(0)} %`);

/** A markdown table (also readable as plain text). */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(headers), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** The scenario of `run` with id `id`. */
export function find(run: BenchRun, id: string): ScenarioResult | undefined {
  return run.scenarios.find((s) => s.id === id);
}

/** CPU per delivered message of the service plus Postgres, µs (null without Postgres CPU). */
export const cpuPerDelivery = (s: ScenarioResult | undefined) => (s && s.measurement.costs.postgresMicros !== null ? cpuOf(s.measurement) : null);

/** A measurement's CPU per delivered message, service plus Postgres, µs. */
export function cpuOf(m: Measurement): number {
  return m.costs.serviceMicros + (m.costs.postgresMicros ?? 0);
}

export const rateOf = (m: Measurement) => m.delivery.inWindowPerSecond;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** What a measurement's receiver saw beyond one arrival per accepted publish: `["<id>: <problems>"]`, or none. */
export function deliveryFaults(id: string, { delivery: d }: Measurement): string[] {
  const problems = [
    d.duplicates > 0 ? `${d.duplicates} duplicates` : "",
    d.unexpected > 0 ? `${d.unexpected} unexpected` : "",
    d.missing > 0 ? `${d.missing} not arrived within ${ms(d.drainAllowanceMs)} of the end of publishing` : "",
  ].filter(Boolean);
  return problems.length ? [`${id}: ${problems.join(", ")}`] : [];
}

/** CPU µs as a table shows them. */
export const micros = (n: number | null) => (n === null ? "n/a" : `${int(n)} µs`);

/** The per-message costs every side-by-side table shows, in order: label, figure, format. */
export const COST_FIGURES: [string, (c: Costs) => number | null, ((n: number | null) => string)?][] = [
  ["CPU µs, service process,", (c) => c.serviceMicros, micros],
  ["CPU µs, Postgres,", (c) => c.postgresMicros, micros],
  ["rows written", (c) => c.rowsWritten],
  ["WAL bytes", (c) => c.walBytes, (n) => (n === null ? "n/a" : int(n))],
  ["WAL records", (c) => c.walRecords, (n) => num(n, 1)],
  ["statements", (c) => c.statements],
  ["commits", (c) => c.commits],
];
