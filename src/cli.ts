/**
 * `dispatch start [--role api|worker|all]`: starts the service, prints how to
 * use it, and shuts down gracefully on SIGTERM/SIGINT. `dispatch migrate`,
 * `dispatch token [create|list|revoke]` and `dispatch keys [rotate]` are
 * commands.ts. Arguments the CLI does not take exit 2 with the usage.
 */
import { parseArgs } from "node:util";
import type { Command } from "./commands";
import { ConfigError, loadConfig } from "./config/config";
import { isDatabaseUnavailable } from "./db/availability";
import { DatabaseStartError } from "./db/connection/errors";
import { DEFAULT_PROJECT } from "./db/vocabulary";
import { parseQuotaLimit, type Quota } from "./domain/projects/quotas";
import { EmbeddedDatabaseError } from "./db/embedded/errors";
import { ListenError } from "./listen-error";
import { createLog, type Log } from "./observability/log";
import type { Role, Service } from "./service";

const ROLES: Role[] = ["api", "worker", "all"];
/** Commands without arguments, as typed after `dispatch`. */
const PLAIN_COMMANDS = ["migrate", "token", "token list", "keys", "keys rotate", "env"] as const;
const USAGE = [
  "usage: dispatch start [--role api|worker|all]   run the service",
  "       dispatch migrate                         apply the database migrations and exit",
  "       dispatch token                           print the configured (or generated) access tokens",
  "       dispatch token create [--name NAME] [--readonly] [--project NAME]",
  "                                                create an access token (printed this once only)",
  "       dispatch token list                      list the access tokens accepted, without their secrets",
  "       dispatch token revoke NAME               revoke a created access token",
  "       dispatch keys [rotate]                   print (or rotate) the signing keys",
  "       dispatch env [--project NAME]            print the variables the official SDKs read (QSTASH_URL, ...)",
  "       dispatch project create NAME             create a project; prints its QSTASH_* variables",
  "       dispatch project limit NAME [--messages-per-day N] [--publishes-per-second N]",
  "                                                set a project's quotas (0: none)",
  "       dispatch project list                    list the projects",
  "       dispatch project delete NAME [--force]   delete a project and all it owns (--force: even with pending messages)",
  "       dispatch help                            print this",
].join("\n");

/** Arguments the CLI does not take: exit 2 with the message and the usage. */
class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseCommandLine(argv);
  // `dispatch help` and `dispatch --help` (or `-h`) ask for the usage: it is an answer, not an error.
  if (values.help || (positionals.length === 1 && positionals[0] === "help")) return exit(0, USAGE);
  const command = commandOf(positionals, values);
  if (command !== null) {
    const config = loadConfig();
    // Each path loads only what it runs: a command needs no HTTP server or worker (dist/ splits them apart).
    const { runCommand } = await import("./commands");
    const result = await runCommand(command, config, createLog(config.logLevel));
    return exit(result.code, result.output);
  }
  const role = values.role as Role;
  if (!ROLES.includes(role)) return exit(2, `--role must be one of ${ROLES.join(", ")}\n${USAGE}`);
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

/** The positionals and options of `argv`; an unknown option or a missing value is a `UsageError`. */
function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        role: { type: "string", default: "all" },
        name: { type: "string" },
        readonly: { type: "boolean" },
        project: { type: "string" },
        force: { type: "boolean" },
        "messages-per-day": { type: "string" },
        "publishes-per-second": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The operator command `positionals` name with its options, or null for `start`. */
function commandOf(
  positionals: string[],
  options: { name?: string; readonly?: boolean; project?: string; force?: boolean; "messages-per-day"?: string; "publishes-per-second"?: string },
): Command | null {
  const [first, second, ...rest] = positionals;
  if (first === "token" && second === "create") {
    if (rest.length > 0) throw new UsageError(`dispatch token create takes options (--name NAME, --readonly, --project NAME), not ${rest.join(" ")}`);
    return { name: "token create", tokenName: options.name ?? null, readOnly: options.readonly ?? false, project: options.project ?? DEFAULT_PROJECT };
  }
  if (options.name !== undefined || options.readonly) throw new UsageError("--name and --readonly go with dispatch token create");
  if (first === "env" && positionals.length === 1 && options.project !== undefined) return { name: "env --project", project: options.project };
  if (options.project !== undefined) throw new UsageError("--project goes with dispatch token create and dispatch env");
  const quota = quotaOf(options);
  if (first === "project" && second === "limit") {
    if (rest.length !== 1 || Object.keys(quota).length === 0) {
      throw new UsageError("dispatch project limit takes one project name and --messages-per-day N and/or --publishes-per-second N");
    }
    return { name: "project limit", project: rest[0]!, quota };
  }
  if (Object.keys(quota).length > 0) throw new UsageError("--messages-per-day and --publishes-per-second go with dispatch project limit");
  if (first === "project") return projectCommand(second, rest, options.force ?? false);
  if (options.force) throw new UsageError("--force goes with dispatch project delete");
  if (first === "token" && second === "revoke") {
    if (rest.length !== 1) throw new UsageError("dispatch token revoke takes one token name (dispatch token list shows them)");
    return { name: "token revoke", tokenName: rest[0]! };
  }
  const plain = PLAIN_COMMANDS.find((command) => command === positionals.join(" "));
  if (plain !== undefined) return { name: plain };
  if (first === "start" && positionals.length === 1) return null;
  throw new UsageError(positionals.length === 0 ? "" : `unknown command: dispatch ${positionals.join(" ")}`);
}

/** The quotas the options set: a whole number each, 0 for none. */
function quotaOf(options: { "messages-per-day"?: string; "publishes-per-second"?: string }): Partial<Quota> {
  const quota: Partial<Quota> = {};
  const limit = (option: string, text: string) => {
    try {
      return parseQuotaLimit(text, `--${option}`);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  };
  if (options["messages-per-day"] !== undefined) quota.messagesPerDay = limit("messages-per-day", options["messages-per-day"]);
  if (options["publishes-per-second"] !== undefined) quota.publishesPerSecond = limit("publishes-per-second", options["publishes-per-second"]);
  return quota;
}

/** `dispatch project create NAME`, `list` or `delete NAME`. */
function projectCommand(action: string | undefined, rest: string[], force: boolean): Command {
  if (action === "list" && rest.length === 0 && !force) return { name: "project list" };
  if ((action !== "create" && action !== "delete") || rest.length !== 1) {
    throw new UsageError(`dispatch project ${action === "create" || action === "delete" ? `${action} takes one project name` : "takes create NAME, list or delete NAME"}`);
  }
  if (force && action !== "delete") throw new UsageError("--force goes with dispatch project delete");
  return action === "create" ? { name: "project create", project: rest[0]! } : { name: "project delete", project: rest[0]!, force };
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

function exit(code: number, message: string): void {
  (code === 0 ? console.log : console.error)(message);
  process.exit(code);
}

main(process.argv.slice(2)).catch((error: Error) => {
  if (error instanceof UsageError) return exit(2, error.message === "" ? USAGE : `${error.message}\n${USAGE}`);
  // Expected failures (a bad variable, a database that cannot be used) are explained in their message; a defect shows its stack.
  if (error instanceof DatabaseStartError || error instanceof ListenError) return exit(1, `dispatch: ${error.message}`);
  const explained = error instanceof ConfigError || error instanceof EmbeddedDatabaseError;
  exit(1, explained ? error.message : `failed to start: ${error.stack ?? error.message}`);
});
