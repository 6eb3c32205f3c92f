/**
 * `npm run bench:report`: the last full run (bench/results/latest.json) read
 * again with the current report code: its targets checked anew and
 * bench/RESULTS.md rewritten with the current bench/READING.md. For a change
 * to the report or the reading after a run; no figure is measured or changed.
 */
import { readFileSync } from "node:fs";
import { checkTargets, type BenchRun, renderReport, writeReport } from "./report";

const stored = JSON.parse(readFileSync(new URL("results/latest.json", import.meta.url), "utf8")) as BenchRun & { machine: string; targets: unknown };
const { machine, targets: _, ...run } = stored;
const checks = checkTargets(run);
const file = writeReport(run, checks, renderReport(run, checks, machine), machine);
console.log(`Rewrote ${file}, bench/results/latest.json and bench/RESULTS.md from the run of ${run.startedAt}.`);
