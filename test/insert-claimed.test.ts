/**
 * A message stored already claimed by the publishing process's worker is
 * attempted from the row the process builds (insert-messages.ts,
 * `claimedRow`), not from the stored row read back. The two must be the same
 * message: for every shape of immediate publish, the built row equals the row
 * a claim reads from the table.
 */
import { describe, expect, it } from "vitest";
import { messageColumns } from "../src/db/message-columns";
import { insertMessagesClaiming } from "../src/domain/publish/insert";
import { messageSettings } from "../src/domain/publish/options";
import { DestinationGuard } from "../src/outbound/destination-guard";
import { prepareMessages, type PublishRequest } from "../src/domain/publish/prepare";
import { useReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";
import { DEFAULT_PROJECT } from "../src/db/vocabulary";

const dispatch = useDispatch();
const receiver = useReceiver();

/** Immediate publishes of every shape the local path takes, each with the options it stores. */
const shapes: Record<string, Record<string, string>> = {
  plain: {},
  "forwarded headers and a content type": {
    "content-type": "application/json; charset=utf-8",
    "svc-forward-x-trace": "abc",
    "svc-forward-x-empty": "",
    "svc-forward-x-unicode": "déjà vu",
  },
  "callbacks with their headers": {
    "svc-callback": "http://127.0.0.1:9/callback",
    "svc-callback-forward-x-cb": "1",
    "svc-failure-callback": "http://127.0.0.1:9/failure",
    "svc-failure-callback-forward-x-fcb": "2",
  },
  "retries, a retry delay, a timeout and a method": {
    "svc-retries": "2",
    "svc-retry-delay": "1000 * (1 + retried)",
    "svc-timeout": "7s",
    "svc-method": "PUT",
  },
  "labels and fields to redact": { "svc-label": "billing", "svc-redact-fields": "body,header[authorization]" },
  "the hosted service's dialect": { "upstash-forward-x-a": "b", "upstash-retries": "1" },
};

describe("a message stored claimed at publish", () => {
  it.each(Object.entries(shapes))("is attempted as stored: %s", async (_shape, headers) => {
    const settings = { ...messageSettings(dispatch.config), llmUrl: null, guard: new DestinationGuard(true) };
    const request: PublishRequest = {
      project: DEFAULT_PROJECT,
      destination: `${receiver.url}/claimed`,
      headers,
      body: Buffer.from([0, 255, 1, 254]),
      queueName: null,
      callerIp: "127.0.0.7",
    };
    const { messages } = await prepareMessages(dispatch.service.sql, request, settings);
    const ids = new Set(messages.map((message) => message.id));
    // A worker id nobody runs: the sweep hands the message back to the service's worker later, which delivers it to the receiver.
    const { claimed } = await insertMessagesClaiming(dispatch.service.sql, messages, settings, { workerId: "insert-claimed-test", ids });
    expect(claimed).toHaveLength(messages.length);

    const sql = dispatch.service.sql;
    const stored = await sql`select ${messageColumns(sql, "m")} from dispatch.messages m where m.id in ${sql([...ids])}`;
    const storedById = new Map(stored.map((row) => [row.id as string, row]));
    for (const row of claimed) expect(row).toStrictEqual({ ...storedById.get(row.id) });
  });
});
