/**
 * A body is delivered byte for byte even when the server forgets the
 * statements the driver prepared (DEALLOCATE ALL, DISCARD ALL, a pooler that
 * swaps server connections): the driver sends such a statement again, and
 * that retry must bind the same data (patches/README.md, defect 5).
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { insertMessages } from "../src/domain/publish/insert";
import { messageSettings } from "../src/domain/publish/options";
import { DestinationGuard } from "../src/outbound/destination-guard";
import { prepareMessages } from "../src/domain/publish/prepare";
import { useReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";
import { DEFAULT_PROJECT } from "../src/db/vocabulary";

const dispatch = useDispatch();
const receiver = useReceiver();

/**
 * Runs `statement` on 8 connections of the service's pool. Each is reserved
 * while it runs it, as a server session would forget its statements between
 * two of the driver's queries (never in the middle of one); the driver learns
 * of it when it next uses a statement it prepared there.
 */
async function forgetPreparedStatements(statement: string): Promise<number> {
  const reserved = await Promise.all(Array.from({ length: 8 }, () => dispatch.service.sql.reserve()));
  for (const connection of reserved) {
    await connection.unsafe(statement, [], { prepare: false });
    connection.release();
  }
  return reserved.length;
}

describe.each(["deallocate all", "discard all"])("with the server running %s on every session under load", (statement) => {
  it("delivers every body byte for byte, as published", async () => {
    const before = receiver.requests.length;
    // Binary bodies (bytes that are not UTF-8 included), JSON, and a large one that crosses the driver's write buffer.
    const bodies = Array.from({ length: 120 }, (_, index) =>
      index % 3 === 0 ? randomBytes(64 + index) : index % 3 === 1 ? Buffer.from(JSON.stringify({ seq: index, ok: true })) : randomBytes(40_000),
    );
    const answers = [];
    let forgotten = 0;
    // Several rounds, each beside a wave of forgetting: statements are prepared, forgotten and retried again and again.
    for (let round = 0; round < 6; round++) {
      const publishing = Promise.all(bodies.slice(round * 20, round * 20 + 20).map((body, index) =>
        dispatch.api(`/v2/publish/${receiver.url}/${round * 20 + index}`, { method: "POST", body, headers: { "Content-Type": "application/octet-stream" } })));
      const [published, count] = await Promise.all([publishing, forgetPreparedStatements(statement)]);
      answers.push(...published);
      forgotten += count;
    }
    expect(answers.map((answer) => answer.status)).toEqual(bodies.map(() => 200));
    await receiver.waitFor(before + bodies.length, 30_000);
    expect(forgotten).toBe(48);
    const received = new Map(receiver.requests.slice(before).map((request) => [Number(request.path.slice(1)), request.body]));
    const mismatched = bodies.filter((body, index) => !received.get(index)?.equals(body)).length;
    expect(mismatched).toBe(0);
    // And what the API shows of a stored body is what was published.
    const { messageId } = await answers[1]!.json();
    expect(Buffer.from((await (await dispatch.api(`/v2/messages/${messageId}`)).json()).body, "utf8")).toEqual(bodies[1]);
  });
});

describe("the message insert", () => {
  it("is prepared on the server, as the tagged statements are (no Describe round trip and commit per batch)", async () => {
    const connection = await dispatch.service.sql.reserve();
    try {
      const settings = { ...messageSettings(dispatch.config), llmUrl: null, guard: new DestinationGuard(true) };
      const request = { destination: `${receiver.url}/prepared`, headers: {}, body: Buffer.from("hi"), queueName: null, callerIp: null, project: DEFAULT_PROJECT };
      for (let i = 0; i < 2; i++) await insertMessages(connection, (await prepareMessages(connection, request, settings)).messages, settings);
      const [prepared] = await connection<{ count: number }[]>`
        select count(*)::int as count from pg_prepared_statements
        where statement like '%insert into dispatch.messages%' and statement not like '%dispatch.claims%'`;
      expect(prepared!.count).toBe(1);
    } finally {
      connection.release();
    }
  });
});
