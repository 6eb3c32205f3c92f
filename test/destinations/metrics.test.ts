/**
 * Destinations in Prometheus without a label per destination: circuits by
 * state across every process, and this process's requests in flight by
 * their destination's circuit state.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { poll } from "../support/poll";
import { type Receiver, startReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
let hanging: Receiver;

beforeAll(async () => {
  hanging = await startReceiver(() => new Promise(() => {}));
});
afterAll(async () => {
  await hanging.close();
});

/** The value of the series `name{label="value"}` in a scrape. */
async function series(name: string, label: string, value: string): Promise<number | undefined> {
  const text = await (await dispatch.api("/metrics")).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${label}="${value}"}`));
  return line === undefined ? undefined : Number(line.split(" ").pop());
}

it("count circuits by state and the slots their destinations hold, labelled by state only", async () => {
  for (let i = 0; i < 10; i++) await dispatch.api(`/v2/publish/${hanging.url}/${i}`, { method: "POST", body: "x" });
  // 16 slots in tests: the hanging destination holds its share, 4, under a closed circuit.
  await poll(async () => (await series("dispatch_destination_slots", "circuit", "CLOSED")) === 4, "4 slots held under a closed circuit");
  expect(await series("dispatch_destination_circuits", "state", "OPEN")).toBe(0);

  expect((await dispatch.api(`/v2/destinations/${hanging.url}/open`, { method: "POST" })).status).toBe(200);
  expect((await dispatch.api("/v2/destinations/https://other.example/open", { method: "POST" })).status).toBe(200);
  // Gauges read the database at a scrape (a scrape within 100 ms of another shares its reading).
  await poll(async () => (await series("dispatch_destination_circuits", "state", "OPEN")) === 2, "two open circuits");
  // The requests in flight stay; the worker sees the circuit at its next report.
  await poll(async () => (await series("dispatch_destination_slots", "circuit", "OPEN")) === 4, "4 slots held under an open circuit");
  expect(await series("dispatch_destination_slots", "circuit", "CLOSED")).toBe(0);
  const text = await (await dispatch.api("/metrics")).text();
  expect(text).not.toContain(hanging.url);
});
