import { describe, expect, it } from "vitest";
import { useReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";

const dispatch = useDispatch();
const receiver = useReceiver();

describe("publish to a URL", () => {
  it("delivers the body, method, content type and forwarded headers", async () => {
    const response = await dispatch.api(`/v2/publish/${receiver.url}/hook?x=1&y=a%20b`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Svc-Forward-X-Custom": "yes", "Svc-Method": "PUT" },
      body: JSON.stringify({ hello: "world" }),
    });
    expect(response.status).toBe(200);
    const { messageId, url } = await response.json();
    expect(messageId).toMatch(/^msg_/);
    expect(url).toBe(`${receiver.url}/hook?x=1&y=a%20b`);
    const [got] = await receiver.waitFor(1);
    expect(got!.method).toBe("PUT");
    expect(got!.path).toBe("/hook?x=1&y=a%20b");
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["x-custom"]).toBe("yes");
    expect(got!.headers["svc-message-id"]).toBe(messageId);
    expect(got!.headers["svc-retried"]).toBe("0");
    expect(got!.headers["svc-signature"]).toBeTruthy();
    expect(got!.body.toString()).toBe('{"hello":"world"}');
  });
});
