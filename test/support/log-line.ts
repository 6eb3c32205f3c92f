/** Writes one warning through the service's logger, for test/pretty-logs.test.ts to run on a terminal and on a pipe. */
import { createLog } from "../../src/observability/log";

createLog("info")("a line for the reader", { level: "warn", messageId: "msg_pretty" });
