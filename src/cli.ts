/**
 * `dispatch start [--role api|worker|all]`: starts the service, prints how to
 * use it, and shuts down gracefully on SIGTERM/SIGINT. `dispatch migrate`,
 * `dispatch token [create|list|revoke]`, `dispatch keys [rotate]` and the
 * rest are commands.ts, read from the command line by command-line.ts, which
 * answers arguments the CLI does not take with exit code 2 and the usage.
 */
import type { CommandResult } from "./commands";
import { failure, invoke } from "./command-line";
import { loadConfig } from "./config/config";
import { isDatabaseUnavailable } from "./db/availability";
import { createLog, type Log } from "./observability/log";
import type { Service } from "./service";

async function main(argv: string[]): Promise<void> {
  const invocation = await invoke(argv);
  if ("answer" in invocation) return exit(invocation.answer);
  const role = invocation.start;
  // Handlers go in before anything starts: a signal during start-up still stops cleanly.
  const config = loadConfig();
  const log = createLog(config.logLevel);
  const started = import("./service").then(({ startService }) => startService(config, role, log));
  const stop = stopper(started, log);
  process.on("SIGTERM", () => stop("SIGTERM", 0));
  process.on("SIGINT", () => stop("SIGINT", 0));
  guardAgainstUncaughtErrors(stop, log);
  const service = await started;
  const { banner, showsSecrets } = await import("./banner");
  console.log(banner({ ...service, role }, config, showsSecrets(service, process.stdout.isTTY === true)));
}

/** Stops the service once (in-flight deliveries finish or are released), then exits with `code`. */
function stopper(started: Promise<Service>, log: Log): (reason: string, code: number) => void {
  let stopping = false;
  const end = (code: number, message: string) => {
    log(message, { level: code === 0 ? "info" : "error" });
    process.exit(code);
  };
  return (reason, code) => {
    if (stopping) return end(1, `${reason} again: exiting now`);
    stopping = true;
    log(`${reason}: stopping (finishing in-flight deliveries)`, { level: "info" });
    // Work still unwinding as pools close must not turn a clean stop into a crash.
    process.on("unhandledRejection", (error) => log(`during shutdown: ${(error as Error).message}`));
    started
      .then((service) => service.stop())
      .then(
        () => end(code, "stopped"),
        (error: Error) => end(1, `shutdown failed: ${error.message}`),
      );
  };
}

/** Frames of the database drivers (postgres.js for the app, node-postgres inside graphile-worker). */
const DRIVER_FRAME = /node_modules[\\/](postgres|pg|pg-pool|pg-protocol)[\\/]/;

/**
 * The last line of defence. An error thrown from a database driver's own
 * callback (a socket event, a timer), or a lost connection nobody awaited (a
 * library's background reconnect), has no caller to reject: it is logged and
 * the process keeps serving, since the driver drops that connection and opens
 * another. Anything else uncaught means the process is in an unknown state: it
 * is logged with its stack and the process stops gracefully with exit code 1,
 * so that its supervisor restarts it and no delivery is stranded.
 */
function guardAgainstUncaughtErrors(stop: (reason: string, code: number) => void, log: Log): void {
  const handle = (error: unknown, origin: string) => {
    const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
    // A lost connection is expected during an outage: one line. A driver bug gets its stack.
    if (isDatabaseUnavailable(error)) return void log(`${origin}, connection lost (serving on): ${(error as Error).message}`);
    if (DRIVER_FRAME.test(stack)) return void log(`${origin} in the database driver (serving on): ${stack}`, { level: "error" });
    log(`${origin}: ${stack}`, { level: "error" });
    stop(`fatal ${origin}`, 1);
  };
  process.on("uncaughtException", (error, origin) => handle(error, origin));
  process.on("unhandledRejection", (reason) => handle(reason, "unhandledRejection"));
}

function exit({ code, output }: CommandResult): void {
  (code === 0 ? console.log : console.error)(output);
  process.exit(code);
}

main(process.argv.slice(2)).catch((error: Error) => exit(failure(error)));
