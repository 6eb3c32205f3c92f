/**
 * A Dispatch instance for one test file: its own database cloned from the
 * template, API and worker in-process, loopback destinations allowed and
 * retry backoff scaled down so no test sleeps through real backoff.
 */
import { afterAll, beforeAll } from "vitest";
import { type Config, loadConfig } from "../../src/config/config";
import type { Log, LogFields } from "../../src/observability/log";
import { type Role, type Service, startService } from "../../src/service";
import { cloneDatabase } from "./database";
import { track } from "./leaks";
import { noteLogLine } from "./no-internal-errors";

/** Shaped like a generated token (base64 JSON with a UserID), as the workflow SDK's webhooks need. */
export const TEST_TOKEN = Buffer.from(JSON.stringify({ UserID: "test-user", Password: "test-password" })).toString("base64");

/** The key-encryption secret of test services (DISPATCH_SECRET). */
export const TEST_SECRET = "test-secret-0123456789-0123456789-0123456789";

/** A fetch Response whose JSON tests read without casts. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ApiResponse = Omit<Response, "json"> & { json(): Promise<any> };

/** `fetch` with a JSON-friendly response type, for calls without the test token. */
export const request = (url: string, init?: RequestInit) => fetch(url, init) as Promise<ApiResponse>;

/** A started test service with a small HTTP client for its API. */
export interface TestService {
  service: Service;
  baseUrl: string;
  config: Config;
  /** Calls the API with the test token. */
  api(path: string, init?: RequestInit): Promise<ApiResponse>;
  stop(): Promise<void>;
}

/** Configuration of a test service; `overrides` win. */
export function testConfig(databaseUrl: string, overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    host: "127.0.0.1",
    port: 0,
    databaseUrl,
    tokens: [TEST_TOKEN],
    // As README "Security" asks of a deployment on a configured database: stored secrets sealed.
    secret: TEST_SECRET,
    allowPrivateNetworks: true,
    retryDelayScale: 0.001,
    workerConcurrency: 16,
    heartbeatIntervalMs: 500,
    workerDeadAfterMs: 3000,
    // Circuits open only in the tests about them (test/destinations/): elsewhere a burst of failures a test
    // makes on purpose would hold its messages until a probe, at timings no test should depend on.
    circuitFailures: 1_000_000,
    // Likewise the throttle of failed authentication (test/auth-throttle.test.ts): every test's client is 127.0.0.1.
    authFailureLimit: 0,
    // Every JSON answer is checked against the API document: a field it does not describe fails the test.
    checkAnswers: true,
    ...overrides,
  };
}

/**
 * A Dispatch for the whole test file: started in `beforeAll` on a fresh
 * database, stopped in `afterAll`. Call it at the top of the file; the object
 * it returns reads the running service.
 */
export function useDispatch(
  overrides: Partial<Config> | (() => Partial<Config>) = {},
  options: ServiceOptions = {},
): TestService {
  let started: TestService | null = null;
  beforeAll(async () => {
    started = await startTestService(typeof overrides === "function" ? overrides() : overrides, options);
  });
  afterAll(async () => {
    await started?.stop();
    started = null;
  });
  const running = () => {
    if (started === null) throw new Error("the file's Dispatch is not running (useDispatch starts it in beforeAll)");
    return started;
  };
  return {
    get service() {
      return running().service;
    },
    get baseUrl() {
      return running().baseUrl;
    },
    get config() {
      return running().config;
    },
    api: (path, init) => running().api(path, init),
    stop: () => running().stop(),
  };
}

/** How a test service runs: its role, its database, and the clock its schedules fire by. */
export interface ServiceOptions {
  role?: Role;
  databaseUrl?: string;
  now?: () => number;
  /** Hears every line the service logs, debug lines included, with its fields. */
  log?: (line: string, fields?: LogFields) => void;
}

/** Starts Dispatch on a fresh database (or `databaseUrl`) in `role`. */
export async function startTestService(
  overrides: Partial<Config> = {},
  options: ServiceOptions = {},
): Promise<TestService> {
  const databaseUrl = options.databaseUrl ?? (await cloneDatabase());
  const config = testConfig(databaseUrl, overrides);
  // Debug lines (an access line per request, a line per attempt) would bury the rest of a run's output.
  const log: Log = (line, fields) => {
    noteLogLine(line);
    options.log?.(line, fields);
    if (fields?.level !== "debug" && !line.includes("terminating connection")) console.error(line);
  };
  const service = await startService(config, options.role ?? "all", log, options.now);
  const baseUrl = service.baseUrl ?? "";
  const stopped = track(`a Dispatch service (${options.role ?? "all"}) at ${baseUrl || "no URL"}`);
  return {
    service,
    baseUrl,
    config,
    api: (path, init = {}) =>
      request(`${baseUrl}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${TEST_TOKEN}`, ...(init.headers as Record<string, string>) },
      }),
    stop: async () => {
      await service.stop();
      stopped();
    },
  };
}

/** Services a test starts (`start`), stopped together (`stopAll`, in an `afterEach`), as `receiverPool` does for receivers. */
export function servicePool() {
  const started: TestService[] = [];
  return {
    async start(overrides: Partial<Config> = {}, options: ServiceOptions = {}): Promise<TestService> {
      const service = await startTestService(overrides, options);
      started.push(service);
      return service;
    },
    stopAll: async () => {
      for (const service of started.splice(0)) await service.stop();
    },
  };
}
