/**
 * Header maps in what Dispatch writes show canonical names (`Content-Type`,
 * `X-Weird-Name`), whatever case they came in: callback and failure-callback
 * bodies, the message, the logs and events, the DLQ list and entry.
 * (Workflow call results and webhook events: workflows/fidelity.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";

const dispatch = useDispatch();
const ODD = { "x-weird-NAME": "v", "ALL-CAPS": "w" };
const CANONICAL = { "X-Weird-Name": ["v"], "All-Caps": ["w"] };
const receiver = useReceiver((req) => ({ status: req.path.startsWith("/fail") ? 500 : 200, headers: ODD, body: "b" }));

async function bodyAt(path: string): Promise<Record<string, any>> {
  const request = await poll(() => receiver.requests.find((r) => r.path === path), `a request to ${path}`);
  return JSON.parse(request.body.toString());
}

/** Whether every name of every header map in `maps` is canonical. */
function expectCanonical(...maps: Record<string, unknown>[]): void {
  for (const name of maps.flatMap((map) => Object.keys(map))) {
    expect(name, name).toBe(name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash, c: string) => dash + c.toUpperCase()));
  }
}

describe("header names", () => {
  it("are canonical in callback bodies (response and source headers) and in the message", async () => {
    const response = await dispatch.api(`/v2/publish/${receiver.url}/ok`, {
      method: "POST",
      headers: { "Upstash-Forward-x-lower-forwarded": "f", "Content-Type": "text/plain", "Upstash-Callback": `${receiver.url}/callback` },
      body: "hello",
    });
    const { messageId } = await response.json();
    const callback = await bodyAt("/callback");
    expect(callback.header).toMatchObject(CANONICAL);
    expectCanonical(callback.header, callback.sourceHeader);
    expect(callback.sourceHeader).toMatchObject({ "X-Lower-Forwarded": "f", "Content-Type": "text/plain" });
    const message = await (await dispatch.api(`/v2/messages/${messageId}`)).json();
    expect(message.header["X-Lower-Forwarded"]).toEqual(["f"]);
    expectCanonical(message.header);
  });

  it("are canonical in failure-callback bodies, the logs, the events and the DLQ", async () => {
    const response = await dispatch.api(`/v2/publish/${receiver.url}/fail`, {
      method: "POST",
      headers: { "Upstash-Retries": "0", "Upstash-Failure-Callback": `${receiver.url}/failure` },
      body: "hello",
    });
    const { messageId } = await response.json();
    const failure = await bodyAt("/failure");
    expect(failure.header).toMatchObject(CANONICAL);
    for (const path of [`/v2/logs?messageId=${messageId}`, `/v2/events?messageId=${messageId}`]) {
      const entries: Record<string, any>[] = await poll(async () => {
        const page = await (await dispatch.api(path)).json();
        const found: Record<string, any>[] = page.logs ?? page.events;
        return found.some((entry) => entry.state === "FAILED") && found;
      }, `the FAILED entry at ${path}`);
      // The attempt's ERROR entry carries the response.
      const error = entries.find((entry) => entry.state === "ERROR");
      expect(error?.responseHeaders, path).toMatchObject(CANONICAL);
      for (const entry of entries) expectCanonical(entry.header, entry.responseHeaders ?? {}, entry.responseHeader ?? {});
    }
    const { messages } = await (await dispatch.api("/v2/dlq")).json();
    const entry = messages.find((m: { messageId: string }) => m.messageId === messageId);
    expect(entry.responseHeader).toMatchObject(CANONICAL);
    const one = await (await dispatch.api(`/v2/dlq/${entry.dlqId}`)).json();
    expect(one.responseHeader).toMatchObject(CANONICAL);
    expectCanonical(one.header, one.responseHeader);
  });
});
