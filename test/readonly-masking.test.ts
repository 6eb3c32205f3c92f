/**
 * A read-only token (an auditor's) or a read-only dashboard session sees the
 * credentials publishers forward masked (`***`): Authorization,
 * Proxy-Authorization, Cookie and names with token, secret, key or password,
 * in a message, its logs, the DLQ, a schedule and a callback's envelope. A
 * full token sees them as published; the destination gets them unchanged.
 */
import { describe, expect, it } from "vitest";
import { dashboardSession } from "./support/dashboard-session";
import { poll } from "./support/poll";
import { useReceiver } from "./support/receiver";
import { request, useDispatch } from "./support/service";

const READONLY = "readonly-token-masking-0123456789";
const dispatch = useDispatch({ readonlyTokens: [READONLY] });
const receiver = useReceiver((request) => ({ status: request.path.startsWith("/fail") ? 500 : 200 }));

const SECRET = "Bearer s3cret-value";
const FORWARDED = {
  "Svc-Forward-Authorization": SECRET,
  "Svc-Forward-X-Api-Key": "key-123",
  "Svc-Forward-Cookie": "session=abc",
  "Svc-Forward-X-Trace": "trace-1",
};

const asReadOnly = (path: string) => request(`${dispatch.baseUrl}${path}`, { headers: { Authorization: `Bearer ${READONLY}` } });

async function publish(path: string, headers: Record<string, string>): Promise<string> {
  const response = await dispatch.api(`/v2/publish/${receiver.url}${path}`, { method: "POST", headers, body: "x" });
  expect(response.status).toBe(200);
  return (await response.json()).messageId;
}

describe("forwarded credentials", () => {
  it("are masked for a read-only token in a message, its logs and the DLQ; a full token and the destination see them", async () => {
    const id = await publish("/fail", { ...FORWARDED, "Svc-Retries": "0" });
    await poll(async () => (await (await dispatch.api(`/v2/messages/${id}`)).json()).state === "FAILED", "the message failed");
    const got = receiver.requests.find((r) => r.headers["svc-message-id"] === id)!;
    expect(got.headers.authorization).toBe(SECRET);

    const full = await (await dispatch.api(`/v2/messages/${id}`)).json();
    expect(full.header.Authorization).toEqual([SECRET]);
    const read = await (await asReadOnly(`/v2/messages/${id}`)).json();
    expect(read.header).toMatchObject({ Authorization: ["***"], "X-Api-Key": ["***"], Cookie: ["***"], "X-Trace": ["trace-1"] });

    const texts = await Promise.all([`/v2/logs?messageId=${id}`, `/v2/events?messageId=${id}`, "/v2/dlq"].map(async (path) => (await asReadOnly(path)).text()));
    for (const text of texts) {
      expect(text).not.toContain("s3cret");
      expect(text).not.toContain("key-123");
    }
    expect(texts[2]).toContain("***");
    expect(await (await dispatch.api("/v2/dlq")).text()).toContain("s3cret");
  });

  it("are masked in a callback's envelope, its callback headers, and a schedule", async () => {
    const id = await publish("/ok", { ...FORWARDED, "Svc-Callback": `${receiver.url}/callback`, "Svc-Callback-Forward-Authorization": SECRET });
    await receiver.waitFor(2);
    const callbackId = await poll(async () => {
      const [row] = await dispatch.service.sql<{ id: string }[]>`select id from dispatch.messages where source_message_id = ${id}`;
      return row?.id;
    }, "the callback message");
    const source = await (await asReadOnly(`/v2/messages/${id}`)).json();
    expect(JSON.stringify(source)).not.toContain("s3cret");
    const callback = await (await asReadOnly(`/v2/messages/${callbackId}`)).json();
    expect(JSON.stringify(callback)).not.toContain("s3cret");
    expect(Buffer.from(JSON.parse(callback.body).sourceBody ?? "", "base64").toString()).toBe("x");

    const scheduled = await dispatch.api(`/v2/schedules/${receiver.url}/scheduled`, {
      method: "POST",
      headers: { "Svc-Cron": "0 0 1 1 *", ...FORWARDED },
    });
    const { scheduleId } = await scheduled.json();
    expect(await (await asReadOnly(`/v2/schedules/${scheduleId}`)).text()).not.toContain("s3cret");
    expect(await (await dispatch.api(`/v2/schedules/${scheduleId}`)).text()).toContain("s3cret");
  });

  it("are masked on the dashboard's message page for a read-only session", async () => {
    const id = await publish("/page", FORWARDED);
    const page = async (token?: string) => {
      const { cookie } = await dashboardSession(dispatch.baseUrl, token);
      return (await request(`${dispatch.baseUrl}/dashboard/messages/${id}`, { headers: { Cookie: cookie } })).text();
    };
    expect(await page(READONLY)).not.toContain("s3cret");
    expect(await page()).toContain("s3cret");
  });
});
