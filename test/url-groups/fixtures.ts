/**
 * What the URL group tests share: a JSON request, adding endpoints to a group
 * and publishing to one through a service's API, and endpoints in URL order.
 */
import { expect } from "vitest";
import type { TestService } from "../support/service";

export const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

/** `addEndpoints` and `publishToGroup` on `dispatch` (the file's service). */
export function groupApi(dispatch: TestService) {
  async function addEndpoints(group: string, endpoints: { url: string; name?: string }[]) {
    const response = await dispatch.api(`/v2/topics/${group}/endpoints`, json({ endpoints }));
    expect(response.status, await response.clone().text()).toBe(200);
  }

  async function publishToGroup(group: string, headers: Record<string, string> = {}, body = '{"event":"created"}') {
    return dispatch.api(`/v2/publish/${group}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body,
    });
  }

  return { addEndpoints, publishToGroup };
}

export const byUrl = (a: { url: string }, b: { url: string }) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
