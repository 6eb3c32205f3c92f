/**
 * Each publish header of the interface changes what the receiver gets, or is
 * rejected with a 400 that stores nothing.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { useReceiver } from "./support/receiver";
import { countMessages, messageEvents } from "./support/rows";
import { TEST_TOKEN, useDispatch } from "./support/service";

/** Delays are scaled (DISPATCH_DELAY_SCALE): a 60 s Delay waits 300 ms, and is stored as 60 s. */
const DELAY_SCALE = 0.005;
const dispatch = useDispatch({ delayScale: DELAY_SCALE });
const receiver = useReceiver();

beforeEach(() => {
  receiver.requests.length = 0;
  receiver.respond(() => ({ status: 200, body: "ok" }));
});

const publish = (path: string, headers: Record<string, string>, body = "payload") =>
  dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body });

const messageCount = () => countMessages(dispatch);

describe.each([
  ["native", "Svc-"],
  ["compat", "Upstash-"],
])("%s dialect", (_name, p) => {
  const lower = p.toLowerCase();

  it("sends the method, content type and forwarded headers, and adds its own headers", async () => {
    const response = await publish("/m", {
      "Content-Type": "text/plain",
      [`${p}Method`]: "PATCH",
      [`${p}Forward-Authorization`]: "Bearer downstream",
      [`${p}Forward-X-Trace`]: "abc",
    });
    const { messageId } = await response.json();
    const [got] = await receiver.waitFor(1);
    expect(got!.method).toBe("PATCH");
    expect(got!.headers["content-type"]).toBe("text/plain");
    expect(got!.headers.authorization).toBe("Bearer downstream");
    expect(got!.headers["x-trace"]).toBe("abc");
    expect(got!.headers[`${lower}message-id`]).toBe(messageId);
    expect(got!.headers[`${lower}retried`]).toBe("0");
    expect(got!.headers[`${lower}caller-ip`]).toMatch(/127\.0\.0\.1/);
    expect(got!.headers[`${lower}signature`]).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(got!.body.toString()).toBe("payload");
  });

  it("applies the timeout: a slower destination is an error and is retried", async () => {
    receiver.respond((_request, index) => (index === 0 ? { status: 200, delayMs: 3000 } : { status: 200 }));
    const response = await publish("/t", { [`${p}Timeout`]: "1s", [`${p}Retries`]: "1" });
    const { messageId } = await response.json();
    const requests = await receiver.waitFor(2);
    expect(requests.map((r) => r.headers[`${lower}retried`])).toEqual(["0", "1"]);
    const events = await messageEvents(dispatch, messageId);
    expect(events.find((e) => e.state === "ERROR")!.error).toMatch(/timed out after 1000 ms/);
  });

  it("honours Delay: the message is due after the delay, and nothing arrives before it", async () => {
    const sent = Date.now();
    const response = await publish("/d", { [`${p}Delay`]: "60s" });
    const { messageId } = await response.json();
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message.notBefore - message.createdAt).toBeGreaterThanOrEqual(60_000);
    expect(message.notBefore - message.createdAt).toBeLessThan(60_100);
    const [got] = await receiver.waitFor(1);
    expect(got!.at - sent).toBeGreaterThanOrEqual(60_000 * DELAY_SCALE - 20);
  });

  it("Not-Before wins over Delay", async () => {
    const sent = Date.now();
    const notBefore = Math.ceil(sent / 1000) + 60;
    const response = await publish("/nb", { [`${p}Delay`]: "1h", [`${p}Not-Before`]: String(notBefore) });
    const { messageId } = await response.json();
    const [got] = await receiver.waitFor(1);
    // An hour's delay would wait 18 s at this scale; Not-Before's 60 s waits about 300 ms.
    expect(got!.at - sent).toBeGreaterThanOrEqual((notBefore * 1000 - sent) * DELAY_SCALE - 20);
    expect(got!.at - sent).toBeLessThan(3600_000 * DELAY_SCALE);
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message.notBefore).toBe(notBefore * 1000);
  });

  it("Retry-Delay replaces the default backoff", async () => {
    receiver.respond(() => ({ status: 500 }));
    const response = await publish("/rd", { [`${p}Retries`]: "2", [`${p}Retry-Delay`]: "1000 * (retried + 1)" });
    const { messageId } = await response.json();
    await receiver.waitFor(3);
    const retries = (await messageEvents(dispatch, messageId)).filter((event) => event.state === "RETRY");
    // The test config scales every retry delay by 0.001: 1000 ms -> 1 ms, 2000 ms -> 2 ms.
    expect(retries.map((r) => Math.round(Number(r.waitMs)))).toEqual([1, 2]);
  });

  it("Label is stored and shown on the message", async () => {
    const response = await publish("/l", { [`${p}Label`]: "billing,eu" });
    const { messageId } = await response.json();
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message.labels).toEqual(["billing", "eu"]);
    expect(message.label).toBe("billing");
  });

  it.each([
    ["Timeout", "soon"],
    ["Retries", "-1"],
    ["Retries", "three"],
    ["Delay", "10 minutes"],
    ["Not-Before", "tomorrow"],
    ["Method", "FETCH"],
    ["Callback", "ftp://example.com/cb"],
    ["Callback", "not a url"],
    ["Failure-Callback", "example.com/no-scheme"],
    ["Retry-Delay", "1000 * attempts"],
    ["Content-Based-Deduplication", "yes"],
    ["Label", "bad label!"],
    ["Callback-Retries", "-2"],
    ["Failure-Callback-Timeout", "forever"],
  ])("rejects %s: %s with a 400 and stores nothing", async (header, value) => {
    const before = await messageCount();
    const extra = header.startsWith("Callback-") ? { [`${p}Callback`]: `${receiver.url}/cb` } : {};
    const failureExtra = header.startsWith("Failure-Callback-") ? { [`${p}Failure-Callback`]: `${receiver.url}/f` } : {};
    const response = await publish("/bad", { ...extra, ...failureExtra, [`${p}${header}`]: value });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toEqual(expect.any(String));
    expect(body.error.toLowerCase()).toContain(`${lower}${header.toLowerCase()}`);
    expect(await messageCount()).toBe(before);
  });

  it.each([
    ["Timeout", "1h", "DISPATCH_MAX_TIMEOUT"],
    ["Retries", "21", "DISPATCH_MAX_RETRIES"],
  ])("refuses %s: %s over its limit with a 412 naming %s, and stores nothing", async (header, value, setting) => {
    const before = await messageCount();
    const response = await publish("/over", { [`${p}${header}`]: value });
    expect(response.status).toBe(412);
    const { error } = await response.json();
    expect(error.toLowerCase()).toContain(`${lower}${header.toLowerCase()}`);
    expect(error).toContain(setting);
    expect(await messageCount()).toBe(before);
  });
});

describe("destinations and limits", () => {
  it("rejects a destination that is not an http(s) URL", async () => {
    for (const destination of ["example.com/x", "ftp://example.com/x", "http://"]) {
      const response = await dispatch.api(`/v2/publish/${destination}`, { method: "POST", body: "x" });
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatch(/destination/);
    }
  });

  it("rejects a body over the maximum message size with a 413", async () => {
    const before = await messageCount();
    const response = await dispatch.api(`/v2/publish/${receiver.url}/big`, {
      method: "POST",
      body: "x".repeat(dispatch.config.maxMessageBytes + 1),
    });
    expect(response.status).toBe(413);
    expect((await response.json()).error).toMatch(/maximum message size/);
    expect(await messageCount()).toBe(before);
  });

  it("keeps a query string of the destination but drops its own token parameter", async () => {
    const response = await fetch(
      `${dispatch.baseUrl}/v2/publish/${receiver.url}/q?a=1&qstash_token=${encodeURIComponent(TEST_TOKEN)}&b=%2F`,
      { method: "POST", body: "q" },
    );
    expect(response.status).toBe(200);
    const [got] = await receiver.waitFor(1);
    expect(got!.path).toBe("/q?a=1&b=%2F");
  });
});
