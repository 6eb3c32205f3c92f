/**
 * What `dispatch <arguments>` asks for, read from the command line: the
 * usage, an operator command (commands.ts) run to its answer, or the service
 * started in a role (cli.ts starts it). Arguments the CLI does not take are
 * answered with exit code 2 and the usage; a failure, with exit code 1 and
 * one explained line (a defect, with its stack). Tests run commands through
 * `invoke` in their own process, as the CLI does.
 */
import { parseArgs } from "node:util";
import type { Command, CommandResult } from "./commands";
import { ConfigError, loadConfig } from "./config/config";
import { DatabaseStartError } from "./db/connection/errors";
import { EmbeddedDatabaseError } from "./db/embedded/errors";
import { DEFAULT_PROJECT } from "./db/vocabulary";
import { parseQuotaLimit, type Quota } from "./domain/projects/quotas";
import { ListenError } from "./listen-error";
import { createLog, type Log, type LogLevel } from "./observability/log";
import type { Role } from "./service";

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

/** What the command line asks for: an answer to print (on stdout with code 0, else stderr) and exit with, or a start. */
export type Invocation = { answer: CommandResult } | { start: Role };

/**
 * Reads `argv` and runs the operator command it names with the configuration
 * in `env`, logging through `logAt(level)` (JSON lines on stderr by default).
 */
export async function invoke(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  logAt: (level: LogLevel) => Log = (level) => createLog(level),
): Promise<Invocation> {
  try {
    const { positionals, values } = parseCommandLine(argv);
    // `dispatch help` and `dispatch --help` (or `-h`) ask for the usage: it is an answer, not an error.
    if (values.help || (positionals.length === 1 && positionals[0] === "help")) return { answer: { code: 0, output: USAGE } };
    const command = commandOf(positionals, values);
    if (command === null) {
      const role = values.role as Role;
      if (!ROLES.includes(role)) return { answer: { code: 2, output: `--role must be one of ${ROLES.join(", ")}\n${USAGE}` } };
      return { start: role };
    }
    const config = loadConfig(env);
    // Each path loads only what it runs: a command needs no HTTP server or worker (dist/ splits them apart).
    const { runCommand } = await import("./commands");
    return { answer: await runCommand(command, config, logAt(config.logLevel)) };
  } catch (error) {
    return { answer: failure(error as Error) };
  }
}

/** The answer to a command or a start that failed: expected failures are explained in their message; a defect shows its stack. */
export function failure(error: Error): CommandResult {
  if (error instanceof UsageError) return { code: 2, output: error.message === "" ? USAGE : `${error.message}\n${USAGE}` };
  if (error instanceof DatabaseStartError || error instanceof ListenError) return { code: 1, output: `dispatch: ${error.message}` };
  const explained = error instanceof ConfigError || error instanceof EmbeddedDatabaseError;
  return { code: 1, output: explained ? error.message : `failed to start: ${error.stack ?? error.message}` };
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
