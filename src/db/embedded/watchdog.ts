/**
 * The watchdog that keeps an embedded Postgres from outliving Dispatch. The
 * server runs in its own process group (a terminal's Ctrl-C reaches Dispatch
 * alone, which drains its deliveries before stopping it), so when Dispatch
 * is killed outright (SIGKILL, the OOM killer, a container runtime) nothing
 * would stop it, and the next start would find the data folder locked. A
 * small shell loop, in a process group of its own too, watches the processes
 * registered as the cluster's users (cluster-users.ts) twice a second; once
 * none is alive (and none registers within a second) it asks the server for
 * a fast shutdown, and an immediate one if it is not gone within 30 s. It
 * ends when the server does. POSIX only: on Windows there is no watchdog, and
 * a start cleans up what a killed process left (cluster.ts). The loop is
 * given to `sh -c`, never written to a file: nothing in the data folder is
 * run (earlier versions ran `watchdog.sh` from it; a start removes it).
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";

/** The name the watchdog runs under (its `$0`), which `ps` shows. */
export const WATCHDOG_NAME = "dispatch-watchdog";

const SCRIPT = `
users=$1; server=$2
# Runs, and is not a zombie (a killed process its parent has not collected yet).
running() {
  kill -0 "$1" 2>/dev/null || return 1
  [ -r "/proc/$1/stat" ] || return 0
  case "$(cat "/proc/$1/stat" 2>/dev/null)" in *") Z "*) return 1 ;; esac
  return 0
}
alive() {
  for file in "$users"/*; do
    [ -e "$file" ] || continue
    running "\${file##*/}" && return 0
  done
  return 1
}
while running "$server"; do
  if ! alive; then
    sleep 1
    alive && continue
    kill -INT "$server" 2>/dev/null
    tries=0
    while running "$server" && [ $tries -lt 60 ]; do sleep 0.5; tries=$((tries + 1)); done
    kill -QUIT "$server" 2>/dev/null
    exit 0
  fi
  sleep 0.5
done
`;

/**
 * Starts the watchdog of the server `serverPid`, whose users register in
 * `usersDir`, as `sh -c <loop> dispatch-watchdog <usersDir> <pid>`, so that
 * `ps` shows what it is. Returns its pid (null where there is none).
 */
export function startWatchdog(usersDir: string, serverPid: number): number | null {
  if (process.platform === "win32") return null;
  rmSync(join(dirname(usersDir), "watchdog.sh"), { force: true });
  const child = spawn("/bin/sh", ["-c", SCRIPT, WATCHDOG_NAME, usersDir, String(serverPid)], { detached: true, stdio: "ignore" });
  child.on("error", () => {});
  child.unref();
  return child.pid ?? null;
}
