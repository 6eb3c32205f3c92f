/**
 * A message stored already claimed by the publishing process's worker is
 * attempted from the row the process builds (insert-messages.ts,
 * `claimedRow`), not from the stored row read back. The two must be the same
 * message: for every shape of immediate publish, the built row equals the row
 * a claim reads from the table.
 */
import { describe, expect, inject, it } from "vitest";
import { messageColumns } from "../src/db/message-columns";
import { insertMessagesClaiming } from "../src/domain/publish/insert";
import { messageSettings } from "../src/domain/publish/options";
import { DestinationGuard } from "../src/outbound/destination-guard";
import { prepareMessages, type PublishRequest } from "../src/domain/publish/prepare";
import { useReceiver } from "./support/receiver";
import { useProject } from "./support/projects";
import { useDispatch } from "./support/service";
import { DEFAULT_PROJECT } from "../src/db/vocabulary";

const dispatch = useDispatch();
const receiver = useReceiver();
const other = useProject(dispatch, "insert-claimed-other");
/** On Citus a claim is per project: one for all could not be placed. */
const onCitus = inject("citusWorkers") !== undefined;
/** One claim for the whole statement (one server), or one per project. */
const claimModes = onCitus ? [true] : [false, true];

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
    const { claimed } = await insertMessagesClaiming(dispatch.service.sql, messages, settings, { workerId: "insert-claimed-test", ids, byProject: onCitus });
    expect(claimed).toHaveLength(messages.length);

    const sql = dispatch.service.sql;
    const stored = await sql`select ${messageColumns(sql, "m")} from dispatch.messages m where m.id in ${sql([...ids])}`;
    const storedById = new Map(stored.map((row) => [row.id as string, row]));
    for (const row of claimed) expect(row).toStrictEqual({ ...storedById.get(row.id) });
  });
});


describe.each(claimModes)("publishes of several projects stored claimed in one statement, a claim per project: %s", (byProject) => {
  it("are held by claims registered with their messages (and their project, when a claim is per project)", async () => {
    const settings = { ...messageSettings(dispatch.config), llmUrl: null, guard: new DestinationGuard(true) };
    const prepare = async (project: string, n: number) => {
      const request: PublishRequest = { project, destination: `${receiver.url}/claimed/${n}`, headers: {}, body: Buffer.from("x"), queueName: null, callerIp: null };
      return (await prepareMessages(dispatch.service.sql, request, settings)).messages;
    };
    // Interleaved, as concurrent publishes are coalesced.
    const messages = [...(await prepare(DEFAULT_PROJECT, 1)), ...(await prepare(other.name, 2)), ...(await prepare(DEFAULT_PROJECT, 3))];
    const ids = new Set(messages.map((message) => message.id));
    const workerId = `insert-claimed-projects-${byProject}`;
    const { claimed } = await insertMessagesClaiming(dispatch.service.sql, messages, settings, { workerId, ids, byProject });
    expect(claimed).toHaveLength(3);

    const claims = await dispatch.service.sql<{ id: number; project: string | null; messageIds: string[] }[]>`
      select id, project, message_ids as "messageIds" from dispatch.claims where worker_id = ${workerId}`;
    const holding = (project: string | null) => claimed.filter((row) => project === null || row.project === project).map((row) => row.id).sort();
    const expected = byProject ? [DEFAULT_PROJECT, other.name].sort() : [null];
    expect(claims.map(({ project, messageIds }) => ({ project, messageIds: [...messageIds].sort() })).sort((a, b) => String(a.project).localeCompare(String(b.project)))).toEqual(
      expected.map((project) => ({ project, messageIds: holding(project) })),
    );
    for (const row of claimed) expect(row.claimId).toBe(claims.find((claim) => claim.project === (byProject ? row.project : null))!.id);
  });
});
