/**
 * What the DLQ tests share: the receiver's responder, which fails every path
 * not healed yet, and the API of one service and receiver: a message published
 * to fail into the DLQ, its entry, and GET and other requests with their
 * status and JSON body.
 */
import { expect } from "vitest";
import { poll } from "../support/poll";
import type { Received, Receiver, Responder } from "../support/receiver";
import { dlqEntries } from "../support/rows";
import type { TestService } from "../support/service";

/** Answers 200 on the paths in `healed`; every other path fails (404 under /missing, else 500). */
export const failingUnlessHealed =
  (healed: Set<string>): Responder =>
  (request) => {
    const path = request.path.split("?")[0]!;
    if (healed.has(path)) return { status: 200, body: "ok" };
    if (path === "/binary") return { status: 500, body: Buffer.from([0xff, 0xfe, 0x00]) };
    return { status: path.startsWith("/missing") ? 404 : 500, headers: { "X-Reason": "broken" }, body: "it broke" };
  };

/** The DLQ helpers on `dispatch` (the file's service) and `receiver` (the file's receiver). */
export function dlqApi(dispatch: TestService, receiver: Receiver) {
  const dlqIdOf = (messageId: string) =>
    poll(async () => (await dlqEntries(dispatch, messageId))[0]?.dlqId, `the DLQ entry of ${messageId}`);

  /**
   * Publishes a message with no retries to `path` (which fails) and waits for
   * its DLQ entry. The dialect is the one of `headers` (native if none).
   */
  async function failed(path: string, headers: Record<string, string> = {}, queue?: string) {
    const route = queue === undefined ? "publish" : `enqueue/${queue}`;
    const compat = Object.keys(headers).some((name) => name.startsWith("Upstash-"));
    const response = await dispatch.api(`/v2/${route}/${receiver.url}${path}`, {
      method: "POST",
      headers: { [compat ? "Upstash-Retries" : "Svc-Retries"]: "0", ...headers },
      body: `body of ${path}`,
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const { messageId } = await response.json();
    return { messageId: messageId as string, dlqId: await dlqIdOf(messageId) };
  }

  const get = async (path: string) => {
    const response = await dispatch.api(path);
    return { status: response.status, body: await response.json() };
  };
  const send = async (method: string, path: string, init: RequestInit = {}) => {
    const response = await dispatch.api(path, { method, ...init });
    return { status: response.status, body: await response.json() };
  };
  const requestsTo = (path: string): Received[] => receiver.requests.filter((r) => r.path.split("?")[0] === path);

  return { dlqIdOf, failed, get, send, requestsTo };
}
