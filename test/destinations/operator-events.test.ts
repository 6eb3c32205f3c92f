/**
 * Operator events: DISPATCH_OPERATOR_EVENTS_URL receives a signed JSON event
 * once per circuit transition (opened, probing, closed, gave up, by hand or
 * not) and when the DLQ grows past its threshold; a receiver of operator
 * events that hangs holds its share of slots and delays no delivery.
 */
import { createHash } from "node:crypto";
import { jwtVerify } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config/config";
import { poll } from "../support/poll";
import { type Received, receiverPool, type Responder, sleep } from "../support/receiver";
import { servicePool, type TestService } from "../support/service";

const receivers = receiverPool();
const services = servicePool();

afterEach(async () => {
  await receivers.closeAll();
  await services.stopAll();
});

const receiver = (responder?: Responder) => receivers.start(responder);
const service = (overrides: Partial<Config>) =>
  services.start({ circuitFailures: 5, circuitCoolDownMs: 300, circuitMaxCoolDownMs: 600, ...overrides });

async function publish(dispatch: TestService, url: string, headers: Record<string, string> = {}): Promise<void> {
  const response = await dispatch.api(`/v2/publish/${url}`, { method: "POST", headers, body: "x" });
  expect(response.status).toBe(200);
}

/** The event a request carries, after checking its signature against the service's current signing key. */
async function verifiedEvent(dispatch: TestService, url: string, request: Received) {
  const { payload } = await jwtVerify(request.headers["svc-signature"] as string, new TextEncoder().encode(dispatch.service.signingKeys.current), {
    issuer: "Dispatch",
    subject: url,
  });
  expect(payload.body).toBe(createHash("sha256").update(request.body).digest("base64url"));
  return JSON.parse(request.body.toString());
}

describe("operator events", () => {
  it("arrive signed, once per transition: opened, probing, closed", async () => {
    const events = await receiver();
    const dispatch = await service({ operatorEventsUrl: `${events.url}/events` });
    // Refuses the first five requests, then answers: the circuit opens, and its probe (the next message) closes it.
    const flaky = await receiver((_, index) => ({ status: index < 5 ? 503 : 200 }));
    for (let i = 0; i < 5; i++) await publish(dispatch, `${flaky.url}/${i}`, { "Svc-Retries": "0" });
    await events.waitFor(1);
    await publish(dispatch, `${flaky.url}/probe`);
    await events.waitFor(3);
    await sleep(1500);
    const received = await Promise.all(events.requests.map((request) => verifiedEvent(dispatch, `${events.url}/events`, request)));
    expect(received.map((event) => [event.type, event.from, event.to])).toEqual([
      ["circuit.opened", "CLOSED", "OPEN"],
      ["circuit.probing", "OPEN", "PROBING"],
      ["circuit.closed", "PROBING", "CLOSED"],
    ]);
    for (const event of received) expect(event.destination).toBe(flaky.url);
    expect(received[0].reason).toMatch(/^5 of 5 attempts failed in the last minute: 5 × HTTP 503$/);
    expect(typeof received[0].probeAt).toBe("string");
    expect(Date.parse(received[0].at)).toBeGreaterThan(0);
  });

  it("report circuits opened and closed by hand, and the DLQ past its threshold, once", async () => {
    const events = await receiver();
    const dispatch = await service({ operatorEventsUrl: `${events.url}/events`, operatorDlqThreshold: 2 });
    const origin = "https://hand.example";
    expect((await dispatch.api(`/v2/destinations/${origin}/open`, { method: "POST" })).status).toBe(200);
    expect((await dispatch.api(`/v2/destinations/${origin}/open`, { method: "POST" })).status).toBe(200);
    expect((await dispatch.api(`/v2/destinations/${origin}/close`, { method: "POST" })).status).toBe(200);
    const failing = await receiver(() => ({ status: 400 }));
    for (let i = 0; i < 4; i++) await publish(dispatch, `${failing.url}/${i}`, { "Svc-Retries": "0" });
    await events.waitFor(3);
    await sleep(1500);
    const received = await Promise.all(events.requests.map((request) => verifiedEvent(dispatch, `${events.url}/events`, request)));
    const types = received.map((event) => event.type);
    expect(types.filter((type) => type === "dlq.threshold")).toHaveLength(1);
    expect(types.filter((type) => type !== "dlq.threshold")).toEqual(["circuit.opened", "circuit.closed"]);
    expect(received.find((event) => event.type === "circuit.opened")).toMatchObject({ destination: origin, reason: "opened by hand" });
    expect(received.find((event) => event.type === "dlq.threshold")).toMatchObject({ threshold: 2 });
  });

  it("to a receiver that hangs, delay no delivery", async () => {
    const hanging = await receiver(() => new Promise(() => {}));
    const dispatch = await service({ operatorEventsUrl: `${hanging.url}/events`, workerConcurrency: 32 });
    for (let i = 0; i < 30; i++) {
      await dispatch.api(`/v2/destinations/https://flapping-${i}.example/open`, { method: "POST" });
      await dispatch.api(`/v2/destinations/https://flapping-${i}.example/close`, { method: "POST" });
    }
    await poll(() => hanging.requests.length >= 8, "the hanging receiver to hold its share of slots");
    const healthy = await receiver();
    const sentAt: number[] = [];
    for (let i = 0; i < 10; i++) {
      sentAt.push(Date.now());
      await publish(dispatch, `${healthy.url}/${i}`);
      await sleep(50);
    }
    await healthy.waitFor(10);
    for (const request of healthy.requests) expect(request.at - sentAt[Number(request.path.slice(1))]!).toBeLessThan(2000);
    expect(hanging.requests).toHaveLength(8);
  });
});
