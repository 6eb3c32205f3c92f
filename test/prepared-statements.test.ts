/**
 * A body is delivered byte for byte even when the server forgets the
 * statements the driver prepared (DEALLOCATE ALL, DISCARD ALL, a pooler that
 * swaps server connections): the driver sends such a statement again, and
 * that retry must bind the same data (patches/README.md, defect 5).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";

const dispatch = useDispatch();
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

/**
 * Runs `statement` on connections of the service's pool, a wave every few
 * milliseconds, until `stop` resolves; resolves with how many ran. Each
 * connection is reserved while it runs the statement, as a server session
 * would forget its statements between two of the driver's queries (never in
 * the middle of one).
 */
async function forgetPreparedStatements(statement: string, stop: Promise<void>): Promise<number> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  let runs = 0;
  while (!stopped) {
    const reserved = await Promise.all(Array.from({ length: 8 }, () => dispatch.service.sql.reserve()));
    for (const connection of reserved) {
      await connection.unsafe(statement, [], { prepare: false });
      connection.release();
      runs++;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return runs;
}

describe.each(["deallocate all", "discard all"])("with the server running %s on every session under load", (statement) => {
  it("delivers every body byte for byte, as published", async () => {
    const before = receiver.requests.length;
    // Binary bodies (bytes that are not UTF-8 included), JSON, and a large one that crosses the driver's write buffer.
    const bodies = Array.from({ length: 120 }, (_, index) =>
      index % 3 === 0 ? randomBytes(64 + index) : index % 3 === 1 ? Buffer.from(JSON.stringify({ seq: index, ok: true })) : randomBytes(40_000),
    );
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const forgetting = forgetPreparedStatements(statement, finished);
    const answers = [];
    // Several rounds, so each publish statement is prepared, forgotten and retried again and again.
    for (let round = 0; round < 6; round++) {
      answers.push(...(await Promise.all(bodies.slice(round * 20, round * 20 + 20).map((body, index) =>
        dispatch.api(`/v2/publish/${receiver.url}/${round * 20 + index}`, { method: "POST", body, headers: { "Content-Type": "application/octet-stream" } })))));
    }
    expect(answers.map((answer) => answer.status)).toEqual(bodies.map(() => 200));
    await receiver.waitFor(before + bodies.length, 30_000);
    done();
    expect(await forgetting).toBeGreaterThan(40);
    const received = new Map(receiver.requests.slice(before).map((request) => [Number(request.path.slice(1)), request.body]));
    const mismatched = bodies.filter((body, index) => !received.get(index)?.equals(body)).length;
    expect(mismatched).toBe(0);
    // And what the API shows of a stored body is what was published.
    const { messageId } = await answers[1]!.json();
    expect(Buffer.from((await (await dispatch.api(`/v2/messages/${messageId}`)).json()).body, "utf8")).toEqual(bodies[1]);
  });
});
