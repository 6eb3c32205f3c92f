/**
 * The Dispatch processes using one embedded cluster: a file per process,
 * named by its pid, in `<data folder>/processes`. A cluster is in use while
 * one of them is alive; the last one out stops it (cluster.ts), and the
 * watchdog (watchdog.ts) stops it when they all died without a word. A
 * process registers before it looks for a running cluster, so a cluster it
 * joins is never stopped under it.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The registry of one data folder. */
export class ClusterUsers {
  readonly dir: string;

  constructor(dataDir: string) {
    this.dir = resolve(dataDir, "processes");
  }

  /** Registers this process (and forgets the files of processes that are gone). */
  register(): void {
    mkdirSync(this.dir, { recursive: true });
    for (const pid of this.registered()) if (!isAlive(pid)) rmSync(join(this.dir, String(pid)), { force: true });
    writeFileSync(join(this.dir, String(process.pid)), "");
  }

  /** Unregisters this process. */
  leave(): void {
    rmSync(join(this.dir, String(process.pid)), { force: true });
  }

  /** The live processes registered, this one left out. */
  others(): number[] {
    return this.registered().filter((pid) => pid !== process.pid && isAlive(pid));
  }

  private registered(): number[] {
    try {
      return readdirSync(this.dir).filter((name) => /^\d+$/.test(name)).map(Number);
    } catch {
      return [];
    }
  }
}

/**
 * Whether process `pid` runs. A zombie (dead, not yet reaped: what a killed
 * process is until its parent, or an init that may never come, collects it)
 * answers signals but does not run.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !isZombie(pid);
}

/** Linux: the state in /proc/<pid>/stat, after the command's closing parenthesis, is Z. */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}
