/**
 * Quotas per project: messages a day and publishes a second, answered when
 * exceeded as the hosted service answers (429 with one family of rate-limit
 * headers), which the official client turns into its rate-limit errors; a
 * refused request stores nothing, and a project without quotas is not held.
 */
import { Client } from "@upstash/qstash";
import { expect, it } from "vitest";
import { setQuota } from "../../src/domain/projects/quotas";
import { runDispatchHere } from "../support/processes";
import { useProject } from "../support/projects";
import { useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const daily = useProject(dispatch, "daily");
const bursty = useProject(dispatch, "bursty");
const receiver = useReceiver();

const stored = async (project: string) =>
  (await dispatch.service.sql<{ n: number }[]>`select count(*)::int as n from dispatch.messages where project = ${project}`)[0]!.n;
const batch = (api: typeof dispatch.api, count: number) =>
  api("/v2/batch", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(Array.from({ length: count }, (_, i) => ({ destination: `${receiver.url}/b${i}`, body: "b" }))),
  });

it("answers a daily quota's excess with 429 and RateLimit-* headers, storing nothing of it", async () => {
  // Set before the project's first request: the API reads a project's quotas at most every 5 s.
  await setQuota(dispatch.service.sql, "daily", { messagesPerDay: 5 });
  const first = await batch(daily.api, 3);
  expect([first.status, (await first.json()).length]).toEqual([200, 3]);
  const over = await batch(daily.api, 3);
  expect(over.status).toBe(429);
  expect((await over.json()).error).toContain("5 messages a day");
  const midnight = Math.floor(Date.now() / 86_400_000 + 1) * 86_400;
  expect([over.headers.get("ratelimit-limit"), over.headers.get("ratelimit-remaining"), Number(over.headers.get("ratelimit-reset"))]).toEqual(["5", "2", midnight]);
  expect(over.headers.get("burst-ratelimit-limit")).toBeNull();
  expect(await stored("daily")).toBe(3);

  const client = new Client({ baseUrl: dispatch.baseUrl, token: daily.token, retry: false });
  await client.publish({ url: `${receiver.url}/fits`, body: "4" });
  await client.publish({ url: `${receiver.url}/fits`, body: "5" });
  await expect(client.publish({ url: `${receiver.url}/over`, body: "6" })).rejects.toMatchObject({ name: "QstashDailyRatelimitError", remaining: "0" });
  expect(await stored("daily")).toBe(5);
  // The default project has no quota.
  const unlimited = await batch(dispatch.api, 10);
  expect([unlimited.status, (await unlimited.json()).length]).toEqual([200, 10]);
});

it("answers a rate quota's excess with 429 and Burst-RateLimit-* headers", async () => {
  await setQuota(dispatch.service.sql, "bursty", { publishesPerSecond: 2 });
  // Seven at once span at most three one-second windows (two each): at least one is refused.
  const answers = await Promise.all(Array.from({ length: 7 }, (_, i) => bursty.api(`/v2/publish/${receiver.url}/r${i}`, { method: "POST", body: "r" })));
  const refused = answers.filter((answer) => answer.status === 429);
  const accepted = answers.filter((answer) => answer.status === 200);
  await Promise.all(answers.map((answer) => answer.text()));
  expect(refused.length).toBeGreaterThan(0);
  expect(accepted.length + refused.length).toBe(7);
  expect([refused[0]!.headers.get("burst-ratelimit-limit"), refused[0]!.headers.get("burst-ratelimit-remaining")]).toEqual(["2", "0"]);
  expect(refused[0]!.headers.get("ratelimit-limit")).toBeNull();
  expect(await stored("bursty")).toBe(accepted.length);
});

it("sets and removes quotas from the command line, and lists them", async () => {
  const env = { DATABASE_URL: dispatch.config.databaseUrl ?? "" };
  const set = await runDispatchHere(["project", "limit", "bursty", "--messages-per-day", "100", "--publishes-per-second", "0"], env);
  expect([set.code, set.stdout.trim()]).toEqual([0, "project bursty: quotas: 100 messages a day"]);
  expect((await runDispatchHere(["project", "list"], env)).stdout).toMatch(/^bursty \(.*; quotas: 100 messages a day\)$/m);
  const bad = await runDispatchHere(["project", "limit", "bursty", "--messages-per-day", "lots"], env);
  expect(bad.code).toBe(2);
});
