/**
 * CPU accounting from /proc, so a report says how much of the machine the
 * benchmark's own processes used during a measurement and how much went to
 * other work (which skews every figure on a shared 2-core machine).
 */
import { cpus } from "node:os";
import { readdirSync, readFileSync } from "node:fs";

/** Cumulative CPU counters at one instant, in clock ticks. */
export interface CpuSnapshot {
  at: number;
  machineBusy: number;
  machineTotal: number;
  /** Ticks used so far by each watched process (by pid). */
  processes: Map<number, number>;
}

/** Cores used between two snapshots: by the whole machine, by the watched processes, and by everything else. */
export interface CpuUse {
  machineCores: number;
  benchCores: number;
  otherCores: number;
  /** Cores used by the `focus` processes given to `cpuUseSince` (Dispatch's), together, if any. */
  focusCores: number | null;
}

function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

/**
 * utime + stime, cutime + cstime (of its children that ended and were waited
 * for) and parent pid of `pid`, or null once it is gone.
 */
function processStat(pid: number): { ticks: number; reapedTicks: number; ppid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ticks: Number(fields[11]) + Number(fields[12]), reapedTicks: Number(fields[13]) + Number(fields[14]), ppid: Number(fields[1]) };
  } catch {
    return null;
  }
}

/** Linux reports process times in USER_HZ ticks, 100 per second on every mainstream build. */
export const TICK_MICROS = 10_000;

/** CPU ticks `pid` has used so far (0 once it is gone). */
export function processTicks(pid: number): number {
  return processStat(pid)?.ticks ?? 0;
}

/**
 * CPU ticks a process tree has used so far: `root` itself, the children it
 * waited for (cutime/cstime: a postmaster's ended backends), and its live
 * descendants. Two readings subtract exactly, whatever started or ended in between.
 */
export function treeTicks(root: number): number {
  const own = processStat(root);
  if (!own) return 0;
  let ticks = own.ticks + own.reapedTicks;
  for (const pid of watchedPids([], [root])) if (pid !== root) ticks += processStat(pid)?.ticks ?? 0;
  return ticks;
}

/** `roots` and every descendant of `treeRoots` (e.g. a postmaster and its backends). */
export function watchedPids(roots: number[], treeRoots: number[]): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = processStat(Number(entry));
    if (stat) parents.set(Number(entry), stat.ppid);
  }
  const inTree = (pid: number): boolean => {
    for (let p = pid, depth = 0; p > 1 && depth < 10; p = parents.get(p) ?? 0, depth++) if (treeRoots.includes(p)) return true;
    return false;
  };
  return [...new Set([...roots, ...[...parents.keys()].filter(inTree)])];
}

/** Reads the machine's and `pids`' counters now. */
export function cpuSnapshot(pids: number[]): CpuSnapshot {
  const machine = machineTicks();
  const processes = new Map<number, number>();
  for (const pid of pids) {
    const stat = processStat(pid);
    if (stat) processes.set(pid, stat.ticks);
  }
  return { at: Date.now(), machineBusy: machine.busy, machineTotal: machine.total, processes };
}

/**
 * Cores used from `before` to now by the machine, by `pids` (the watched
 * processes now) and by the `focus` ones among them. One that started in
 * between counts from zero; one that ended in between is lost (short-lived
 * backends), so "other" errs high.
 */
export function cpuUseSince(before: CpuSnapshot, pids: number[], focus?: number[]): CpuUse {
  const after = cpuSnapshot(pids);
  const cores = cpus().length;
  const machineTicksUsed = after.machineBusy - before.machineBusy;
  const share = machineTicksUsed / Math.max(1, after.machineTotal - before.machineTotal);
  const ticksPerCore = (after.machineTotal - before.machineTotal) / cores;
  let bench = 0;
  for (const [pid, ticks] of after.processes) bench += ticks - (before.processes.get(pid) ?? 0);
  const benchCores = ticksPerCore > 0 ? bench / ticksPerCore : 0;
  const machineCores = share * cores;
  const focusTicks = focus === undefined ? null : focus.reduce((sum, pid) => sum + (after.processes.get(pid) ?? 0) - (before.processes.get(pid) ?? 0), 0);
  return {
    machineCores,
    benchCores,
    otherCores: Math.max(0, machineCores - benchCores),
    focusCores: focusTicks === null || ticksPerCore <= 0 ? null : focusTicks / ticksPerCore,
  };
}
