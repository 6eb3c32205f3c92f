/**
 * The destinations API (a Dispatch extension): list by name with a cursor
 * and a circuit filter, read one with what it holds now, open and close a
 * circuit by hand; bad input is a 400, an unknown destination a 404; idle
 * destinations are forgotten by maintenance.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forgetIdleDestinations } from "../../src/domain/destinations/destinations";
import { poll } from "../support/poll";
import { type Receiver, startReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

describe("destinations", () => {
  it("are listed by name, a page at a time, and filtered by circuit", async () => {
    for (const name of ["a", "b", "c"]) {
      expect((await dispatch.api(`/v2/destinations/https://${name}.list.example/open`, { method: "POST" })).status).toBe(200);
    }
    expect((await dispatch.api("/v2/destinations/https://b.list.example/close", { method: "POST" })).status).toBe(200);
    const first = await (await dispatch.api("/v2/destinations?count=2")).json();
    expect(first.destinations.map((d: { destination: string }) => d.destination)).toEqual(["https://a.list.example", "https://b.list.example"]);
    const second = await (await dispatch.api(`/v2/destinations?count=2&cursor=${encodeURIComponent(first.cursor)}`)).json();
    expect(second.destinations.map((d: { destination: string }) => d.destination)).toEqual(["https://c.list.example"]);
    expect(second.cursor).toBeUndefined();
    const open = await (await dispatch.api("/v2/destinations?circuit=open")).json();
    expect(open.destinations.map((d: { destination: string; circuit: string; openedByHand: boolean }) => [d.destination, d.circuit, d.openedByHand])).toEqual([
      ["https://a.list.example", "OPEN", true],
      ["https://c.list.example", "OPEN", true],
    ]);
  });

  it("read one with its health and what waits for it; its messages wait while it is open by hand", async () => {
    await poll(async () => {
      await dispatch.api(`/v2/publish/${receiver.url}/warm`, { method: "POST", body: "x" });
      return (await (await dispatch.api(`/v2/destinations/${encodeURIComponent(receiver.url)}`)).json()).attempts > 0;
    }, "a report of the receiver's attempts");
    const opened = await (await dispatch.api(`/v2/destinations/${receiver.url}/open`, { method: "POST" })).json();
    expect(opened).toMatchObject({ circuit: "OPEN", openedByHand: true, openReason: "opened by hand", probeAt: null, giveUpAt: null });
    const before = receiver.requests.length;
    for (let i = 0; i < 3; i++) await dispatch.api(`/v2/publish/${receiver.url}/held/${i}`, { method: "POST", body: "x" });
    const held = await poll(async () => {
      const row = await (await dispatch.api(`/v2/destinations/${receiver.url}/any/path`)).json();
      return row.waiting === 3 && row;
    }, "three messages waiting in the line");
    expect(held).toMatchObject({ destination: receiver.url, inFlight: 0, due: 0, waiting: 3, failures: 0, errorRate: 0 });
    expect(held.lastSuccessAt).toBeGreaterThan(0);
    expect(receiver.requests.length).toBe(before);
    const closed = await (await dispatch.api(`/v2/destinations/${receiver.url}/close`, { method: "POST" })).json();
    expect(closed.circuit).toBe("CLOSED");
    await receiver.waitFor(before + 3);
  });

  it("answer 400 for what is not an origin, 404 for one never attempted, 400 for an unknown circuit", async () => {
    const bad = await dispatch.api("/v2/destinations/not-a-url");
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatch(/an origin such as https:\/\/example.com/);
    const unknown = await dispatch.api("/v2/destinations/https://never.example");
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatch(/nothing was attempted to it/);
    expect((await dispatch.api("/v2/destinations/https://never.example/close", { method: "POST" })).status).toBe(404);
    const circuit = await dispatch.api("/v2/destinations?circuit=HALF_OPEN");
    expect(circuit.status).toBe(400);
    expect((await circuit.json()).error).toMatch(/circuit must be one of CLOSED, OPEN, PROBING, GAVE_UP/);
  });

  it("idle for longer than the retention, closed and with nothing waiting, are forgotten", async () => {
    const sql = dispatch.service.sql;
    await sql`insert into dispatch.destinations (destination, last_attempt_at) values
      ('https://idle.example', now() - interval '20 days'), ('https://recent.example', now())`;
    await sql`insert into dispatch.destinations (destination, circuit, opened_at, last_attempt_at)
      values ('https://open-idle.example', 'OPEN', now(), now() - interval '20 days')`;
    expect(await forgetIdleDestinations(sql, 14 * 86_400_000)).toBe(1);
    const left = await sql<{ destination: string }[]>`
      select destination from dispatch.destinations where destination like '%idle.example' or destination = 'https://recent.example'
      order by 1`;
    expect(left.map((row) => row.destination)).toEqual(["https://open-idle.example", "https://recent.example"]);
  });
});
