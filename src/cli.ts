/**
 * `dispatch start [--role api|worker|all]`: starts the service, prints how to
 * use it, and shuts down gracefully on SIGTERM/SIGINT.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "./config";
import { EmbeddedDatabaseError } from "./db/embedded-error";
import { type Role, type Service, startService } from "./service";

const ROLES: Role[] = ["api", "worker", "all"];
const USAGE = "usage: dispatch start [--role api|worker|all]";

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { role: { type: "string", default: "all" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help || positionals[0] !== "start") return exit(values.help ? 0 : 2, USAGE);
  const role = values.role as Role;
  if (!ROLES.includes(role)) return exit(2, `--role must be one of ${ROLES.join(", ")}\n${USAGE}`);
  // Handlers go in before anything starts: a signal during start-up still stops cleanly.
  const started = startService(loadConfig(), role, (line) => console.error(line));
  handleSignals(started);
  printBanner(await started, role);
}

function printBanner(service: Service, role: Role): void {
  const lines = [
    `Dispatch is running (role: ${role}${service.embedded ? ", embedded Postgres" : ""}).`,
    service.baseUrl ? `  URL:                 ${service.baseUrl}` : null,
    `  Token:               ${service.tokens[0]}`,
    `  Current signing key: ${service.signingKeys.current}`,
    `  Next signing key:    ${service.signingKeys.next}`,
    service.baseUrl
      ? `\nTry it:\n  curl -X POST '${service.baseUrl}/v2/publish/https://example.com/hook' \\\n` +
        `    -H 'Authorization: Bearer ${service.tokens[0]}' -H 'Content-Type: application/json' \\\n` +
        `    -d '{"hello":"world"}'`
      : null,
  ];
  console.log(lines.filter((line) => line !== null).join("\n"));
}

function handleSignals(started: Promise<Service>): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return exit(1, `${signal} again: exiting now`);
    stopping = true;
    console.error(`${signal}: stopping (finishing in-flight deliveries)...`);
    // Work still unwinding as pools close must not turn a clean stop into a crash.
    process.on("unhandledRejection", (error) => console.error(`during shutdown: ${(error as Error).message}`));
    started
      .then((service) => service.stop())
      .then(
        () => exit(0, "stopped"),
        (error: Error) => exit(1, `shutdown failed: ${error.message}`),
      );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

function exit(code: number, message: string): void {
  (code === 0 ? console.log : console.error)(message);
  process.exit(code);
}

main(process.argv.slice(2)).catch((error: Error) => {
  const explained = error instanceof ConfigError || error instanceof EmbeddedDatabaseError;
  exit(1, explained ? error.message : `failed to start: ${error.stack ?? error.message}`);
});
