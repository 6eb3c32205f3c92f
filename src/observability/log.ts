/**
 * Logging: every part of the service logs through a `Log`, a message and
 * fields. The command line's is `createLog`: JSON lines through pino (level
 * from DISPATCH_LOG_LEVEL), made human-readable by pino-pretty on a terminal.
 * Nothing logged carries a secret: lines name messages and requests by id and
 * never include tokens, signing keys or forwarded headers.
 */
import { destination, pino } from "pino";

/** What a line may carry besides its message. */
export interface LogFields {
  /** `warn` when not given: most lines report a problem. */
  level?: LogLevel;
  /** The message a delivery line is about. */
  messageId?: string;
  /** The project of the message or request a line is about (issue 37). */
  project?: string;
  /** The request a line was written during (the `X-Request-Id` answered). */
  requestId?: string;
  [field: string]: unknown;
}

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * How every part of the service logs. `hears(level)`, when a log has it, says
 * whether lines of that level go anywhere, so that a line nobody reads need
 * not be built; a log without it hears every level.
 */
export type Log = ((message: string, fields?: LogFields) => void) & { hears?: (level: LogLevel) => boolean };

/**
 * JSON lines on stderr at `level` and above; pretty (pino-pretty) when stderr
 * is a terminal; JSON lines handed to `to` when given (a command run in a test's process).
 */
export function createLog(level: LogLevel, pretty = process.stderr.isTTY === true, to?: { write(line: string): void }): Log {
  const readable = pretty && to === undefined;
  const logger = pino({
    level,
    base: { service: "dispatch" },
    ...(readable
      ? { transport: { target: "pino-pretty", options: { destination: 2, translateTime: "SYS:standard" } } }
      : {}),
  }, readable ? undefined : (to ?? destination({ dest: 2, sync: true })));
  const log: Log = (message, { level: lineLevel = "warn", ...fields } = {}) => logger[lineLevel](fields, message);
  log.hears = (lineLevel) => logger.isLevelEnabled(lineLevel);
  return log;
}
