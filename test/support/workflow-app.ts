/**
 * Hosts workflows written with the official `@upstash/workflow` `serve()` in
 * a real HTTP server on 127.0.0.1, pointed at a test Dispatch, with signature
 * verification on.
 */
import type { AddressInfo } from "node:net";
import { serve as serveHttp, type ServerType } from "@hono/node-server";
import { Client as QStashClient, Receiver } from "@upstash/qstash";
import { Client as WorkflowClient, type RouteFunction, serve, type WorkflowServeOptions } from "@upstash/workflow";
import { Hono } from "hono";
import { SDK_HEADER, SDK_VERSION_HEADER } from "../../src/domain/headers/workflow";
import { poll } from "./poll";
import { type Receiver as TestReceiver, type Responder, startReceiver } from "./receiver";
import { TEST_TOKEN, type TestService } from "./service";

/** A workflow route: the function and its serve options. */
export type WorkflowRoute = {
  route: RouteFunction<unknown, unknown>;
  options?: Partial<WorkflowServeOptions<unknown, unknown>>;
};

/** A running workflow app. */
export interface WorkflowApp {
  baseUrl: string;
  url(path: string): string;
  /** Requests each route received (path → count). */
  calls: Map<string, number>;
  client: WorkflowClient;
  close(): Promise<void>;
}

/**
 * Serves `routes` (path → workflow) on 127.0.0.1 against `dispatch`, calling
 * it with `token` (the test token, the default project's, unless given: then
 * the app runs as that token's project and verifies with its signing keys).
 */
export async function startWorkflowApp(
  dispatch: TestService,
  routes: Record<string, WorkflowRoute>,
  { token = TEST_TOKEN }: { token?: string } = {},
): Promise<WorkflowApp> {
  const qstashClient = new QStashClient({ baseUrl: dispatch.baseUrl, token, retry: false });
  const keys = token === TEST_TOKEN ? dispatch.service.signingKeys : await signingKeysOf(dispatch, token);
  const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
  const calls = new Map<string, number>();
  const app = new Hono();
  let baseUrl = "";
  for (const [path, { route, options }] of Object.entries(routes)) {
    const { handler } = serve(route, {
      qstashClient,
      receiver,
      url: undefined,
      ...options,
      baseUrl: undefined,
    } as WorkflowServeOptions<unknown, unknown>);
    app.post(path, (c) => {
      calls.set(path, (calls.get(path) ?? 0) + 1);
      return handler(rewrite(c.req.raw, baseUrl));
    });
  }
  const server: ServerType = await new Promise((resolve) => {
    const s = serveHttp({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    url: (path) => `${baseUrl}${path}`,
    calls,
    client: new WorkflowClient({ baseUrl: dispatch.baseUrl, token }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The signing keys of `token`'s project (`GET /v2/keys`), which signs its deliveries. */
async function signingKeysOf(dispatch: TestService, token: string): Promise<{ current: string; next: string }> {
  const response = await fetch(`${dispatch.baseUrl}/v2/keys`, { headers: { Authorization: `Bearer ${token}` } });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`GET /v2/keys answered ${response.status}: ${body}`);
  return JSON.parse(body) as { current: string; next: string };
}

/** The request as the app sees it, with its public URL (the server sees 127.0.0.1 already). */
function rewrite(request: Request, baseUrl: string): Request {
  const url = new URL(request.url);
  return new Request(`${baseUrl}${url.pathname}${url.search}`, request);
}

/** Waits until a workflow has reported `key` in `reports` (a map its routes write to), and returns the value. */
export async function waitForReport<T>(reports: Map<string, unknown>, key: string, timeoutMs = 20_000): Promise<T> {
  const found = await poll(() => reports.has(key) && { value: reports.get(key) as T }, `the workflow to report ${key}`, timeoutMs);
  return found.value;
}

/**
 * Answers like a workflow SDK that has not finished the run: a run whose steps
 * go to a receiver answering so stays active (`useReceiver(unfinishedRun)`).
 */
export const unfinishedRun: Responder = () => ({ status: 200, headers: { [SDK_VERSION_HEADER]: "1", [SDK_HEADER]: "v1.3.3" }, body: "[]" });

/** A receiver that answers like a workflow SDK that has not finished the run (`unfinishedRun`), for one test. */
export function startUnfinishedRunReceiver(): Promise<TestReceiver> {
  return startReceiver(unfinishedRun);
}

/** Starts a run whose init step goes to `receiver` (`startUnfinishedRunReceiver`, which leaves it active); its id. */
export async function startActiveRun(dispatch: TestService, receiver: TestReceiver): Promise<string> {
  const response = await dispatch.api(`/v2/trigger/${receiver.url}/workflow`, { method: "POST", body: "{}" });
  if (response.status !== 200) throw new Error(`trigger answered ${response.status}: ${await response.text()}`);
  return (await response.json()).workflowRunId;
}
