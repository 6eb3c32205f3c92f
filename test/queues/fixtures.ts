/**
 * What the queue tests share: a receiver of its own per test, a responder that
 * measures how many requests it holds at once, enqueueing, and the queue
 * resource's API (upsert, get, pause/resume, a message's state) of one service.
 */
import { expect } from "vitest";
import { type Receiver, type Reply, type Responder, sleep } from "../support/receiver";
import type { TestService } from "../support/service";

/**
 * A responder that holds each request `hold` (ms, or until the promise
 * settles) before answering `reply(n, attempt)` (n = the `n` of the JSON
 * body, attempt = how many requests for that n came before) and records the
 * most requests it ever held at once.
 */
export function tracking(hold: number | Promise<void>, reply: (n: number, attempt: number) => Reply = () => ({ status: 200 })) {
  const attempts = new Map<number, number>();
  const state = { inFlight: 0, maxInFlight: 0, order: [] as { n: number; status: number }[] };
  const responder: Responder = async (request) => {
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    const n = (JSON.parse(request.body.toString()) as { n: number }).n;
    const attempt = attempts.get(n) ?? 0;
    attempts.set(n, attempt + 1);
    try {
      if (typeof hold !== "number") await hold;
      else if (hold > 0) await sleep(hold);
      const answer = reply(n, attempt);
      state.order.push({ n, status: answer.status ?? 200 });
      return answer;
    } finally {
      // Dispatch cannot start a request that waits on this one before the reply below is written.
      state.inFlight--;
    }
  };
  return { state, responder };
}

export const indexesOf = (target: Receiver) => target.requests.map((r) => (JSON.parse(r.body.toString()) as { n: number }).n);

export async function enqueue(api: TestService, queue: string, url: string, n: number, headers: Record<string, string> = {}) {
  const response = await api.api(`/v2/enqueue/${queue}/${url}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ n }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as { messageId: string; url: string; deduplicated: boolean };
}

/** The queue resource's API on `dispatch` (the file's service), or on `api` where a function takes one. */
export function queueApi(dispatch: TestService) {
  async function upsert(queueName: string, parallelism: number, paused = false) {
    const response = await dispatch.api("/v2/queues", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ queueName, parallelism, paused }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
  }

  async function getQueue(name: string, api = dispatch) {
    const response = await api.api(`/v2/queues/${name}`);
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as {
      name: string;
      createdAt: number;
      updatedAt: number;
      parallelism: number;
      lag: number;
      paused: boolean;
    };
  }

  const post = (path: string) => dispatch.api(path, { method: "POST" });

  async function stateOf(messageId: string, api = dispatch): Promise<string> {
    const response = await api.api(`/v2/messages/${messageId}`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { state: string }).state;
  }

  return { upsert, getQueue, post, stateOf };
}
