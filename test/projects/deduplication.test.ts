/**
 * Projects deduplicate apart: the same deduplication id (or content) to the
 * same URL makes one message in each project, in one batch or in two.
 */
import { expect, it } from "vitest";
import { insertMessages } from "../../src/domain/publish/insert";
import { messageSettings } from "../../src/domain/publish/options";
import { prepareMessages } from "../../src/domain/publish/prepare";
import { DestinationGuard } from "../../src/outbound/destination-guard";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const receiver = useReceiver();

/** Publishes with deduplication id `id`: 200 for a new message, 202 for a duplicate (its holder's id). */
const publish = async (api: typeof dispatch.api, id: string) => {
  const response = await api(`/v2/publish/${receiver.url}/once`, { method: "POST", headers: { "Svc-Deduplication-Id": id }, body: id });
  const body = (await response.json()) as { messageId: string; deduplicated?: boolean };
  expect(response.status).toBe(body.deduplicated ? 202 : 200);
  return body;
};

it("makes one message per project for one deduplication id, and deduplicates within each", async () => {
  const first = await publish(dispatch.api, "order-1");
  const theirs = await publish(acme.api, "order-1");
  expect(theirs.messageId).not.toBe(first.messageId);
  expect(theirs.deduplicated ?? false).toBe(false);
  const again = await publish(acme.api, "order-1");
  expect(again).toMatchObject({ messageId: theirs.messageId, deduplicated: true });
  expect((await publish(dispatch.api, "order-1")).messageId).toBe(first.messageId);
  await receiver.waitFor(2);
  const stored = await dispatch.service.sql`select project from dispatch.messages order by seq`;
  expect(stored).toEqual([{ project: "default" }, { project: "acme" }]);
});

it("keeps projects apart when their publishes share one insert", async () => {
  // The publisher coalesces concurrent requests, of any project, into one insert (publish/publish.ts): one batch here.
  const settings = { ...messageSettings(dispatch.config), llmUrl: null, guard: new DestinationGuard(true) };
  const sql = dispatch.service.sql;
  const results = await sql.begin(async (tx) => {
    const messages = [];
    for (const project of ["default", "acme", "acme"]) {
      const request = { project, destination: `${receiver.url}/batched`, headers: { "svc-deduplication-id": "order-2" }, body: Buffer.from(project), queueName: null, callerIp: null };
      messages.push(...(await prepareMessages(tx, request, settings)).messages);
    }
    return insertMessages(tx, messages, settings);
  });
  expect(results.map((result) => result.deduplicated)).toEqual([false, false, true]);
  expect(results[2]!.messageId).toBe(results[1]!.messageId);
  const rows = await sql`select project from dispatch.deduplication_keys where message_id in ${sql(results.map((result) => result.messageId))} order by project`;
  expect(rows).toEqual([{ project: "acme" }, { project: "default" }]);
});
