/**
 * The recorder writes plain deliveries in shared statements: those that
 * finish together wait briefly for one another (worker/recorder.ts,
 * `PLAIN_LINGER_MS`), so a lightly loaded worker does not pay a statement, a
 * commit and a round trip per delivered message. Each is recorded as if alone:
 * DELIVERED, its attempt logged, its claim dropped.
 */
import { Counter } from "prom-client";
import { describe, expect, it } from "vitest";
import { DatabaseAvailability } from "../src/db/availability";
import type { Sql } from "../src/db/client";
import type { ClaimedMessage } from "../src/db/queries/claim-messages";
import type { AttemptRecord } from "../src/domain/delivery/outcome";
import { insertMessagesClaiming } from "../src/domain/publish/insert";
import { circuitSettings } from "../src/domain/destinations/circuit";
import { messageSettings } from "../src/domain/publish/options";
import { DestinationGuard } from "../src/outbound/destination-guard";
import { prepareMessages } from "../src/domain/publish/prepare";
import { Recorder } from "../src/worker/recorder";
import { attemptsOf, countMessages, storedClaims } from "./support/rows";
import { useDispatch } from "./support/service";
import { DEFAULT_PROJECT } from "../src/db/vocabulary";

const dispatch = useDispatch();

/** `count` messages stored claimed by a worker nobody runs (the service's sweep would hand them back only after 3 s). */
async function claimedMessages(count: number): Promise<ClaimedMessage[]> {
  const settings = { ...messageSettings(dispatch.config), llmUrl: null, guard: new DestinationGuard(true) };
  const messages = [];
  for (let i = 0; i < count; i++) {
    const request = { destination: `http://127.0.0.1:9/recorded/${i}`, headers: {}, body: Buffer.from(`m${i}`), queueName: null, callerIp: null, project: DEFAULT_PROJECT };
    messages.push(...(await prepareMessages(dispatch.service.sql, request, settings)).messages);
  }
  const ids = new Set(messages.map((message) => message.id));
  const { claimed } = await insertMessagesClaiming(dispatch.service.sql, messages, settings, { workerId: "recorder-test", ids, byProject: false });
  return claimed;
}

const delivered = (message: ClaimedMessage): AttemptRecord => ({
  message,
  attempt: { kind: "response", status: 200, headers: {}, body: Buffer.alloc(0), startedAt: new Date(), durationMs: 1 },
  outcome: { kind: "delivered" },
});

/** The service's client, noting how many deliveries each statement that records plain deliveries carries. */
function countingSql(): { sql: Sql; batches: number[] } {
  const batches: number[] = [];
  const sql = new Proxy(dispatch.service.sql, {
    apply(target, self, args: unknown[]) {
      const strings = args[0] as TemplateStringsArray | undefined;
      // The statement's first parameter is the ids of the messages it records.
      if (Array.isArray(strings) && strings.join("").includes("set state = 'DELIVERED', completed_at = now()")) {
        batches.push((args[1] as string[]).length);
      }
      return Reflect.apply(target, self, args);
    },
  });
  return { sql, batches };
}

function recorderOn(sql: Sql): Recorder {
  const fallbacks = new Counter({ name: "recorder_test_fallbacks", help: "unused", labelNames: ["batch"], registers: [] });
  const availability = new DatabaseAvailability(sql, () => {});
  const settings = messageSettings(dispatch.config);
  return new Recorder(sql, availability, { ...settings, circuits: circuitSettings(dispatch.config, settings) }, () => {}, fallbacks);
}

/** Records `count` claimed messages' deliveries all at once through a new recorder; resolves once all are committed. */
async function recordTogether(count: number): Promise<{ ids: string[]; batches: number[]; recorder: Recorder }> {
  const messages = await claimedMessages(count);
  const { sql, batches } = countingSql();
  const recorder = recorderOn(sql);
  recorder.claimed(messages);
  await Promise.all(messages.map((message) => recorder.record(delivered(message))));
  return { ids: messages.map((message) => message.id), batches, recorder };
}

describe("the recorder", () => {
  it("records plain deliveries that finish together in one statement, each as if alone", async () => {
    const { ids, batches, recorder } = await recordTogether(20);
    expect(batches).toEqual([20]);

    expect(await countMessages(dispatch, { ids, states: ["DELIVERED"] })).toBe(20);
    expect(await attemptsOf(dispatch, ids)).toBe(20);
    await recorder.flushReleased();
    expect((await storedClaims(dispatch)).filter((claim) => claim.workerId === "recorder-test")).toEqual([]);
  });

  it("writes a full batch at once and the rest in the next statement", async () => {
    const { ids, batches } = await recordTogether(40);
    expect(batches).toEqual([32, 8]);
    expect(await countMessages(dispatch, { ids, states: ["DELIVERED"] })).toBe(40);
  });

  it("counts each claim's attempts apart when it is handed several claims at once, and drops each once its own are recorded", async () => {
    // On Citus one claim call per project: a worker's claim hands the recorder several claims together.
    const [first, second] = [await claimedMessages(2), await claimedMessages(3)];
    expect(first![0]!.claimId).not.toBe(second![0]!.claimId);
    const recorder = recorderOn(dispatch.service.sql);
    recorder.claimed([...first!, ...second!]);
    const ours = new Set([...first!, ...second!].map((message) => message.id));
    const mine = async () => (await storedClaims(dispatch)).filter((claim) => claim.messageIds.some((id) => ours.has(id)));

    await Promise.all(first!.map((message) => recorder.record(delivered(message))));
    await recorder.flushReleased();
    expect((await mine()).map((claim) => claim.messageIds)).toEqual([second!.map((message) => message.id)]);
    await Promise.all(second!.map((message) => recorder.record(delivered(message))));
    await recorder.flushReleased();
    expect(await mine()).toEqual([]);
  });

  it("records a lone delivery", async () => {
    const { ids, batches } = await recordTogether(1);
    expect(batches).toEqual([1]);
    expect(await countMessages(dispatch, { ids, states: ["DELIVERED"] })).toBe(1);
  });
});
