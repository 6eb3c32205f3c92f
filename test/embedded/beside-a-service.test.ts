/**
 * The embedded default as a newcomer lives with it (README "The two
 * commands"), part two: operator commands and a second `dispatch start` join
 * the running cluster; the banner's SDK lines and its "Try it" work offline;
 * the SSRF guard is on by default. Run from a copy of the project in a
 * `mktemp -d` folder (mode 700), as superuser-and-kill.test.ts is.
 */
import { Client } from "@upstash/qstash";
import { describe, expect, it } from "vitest";
import { isAlive } from "../../src/db/embedded/cluster-users";
import { poll } from "../support/poll";
import { ALLOW_LOCAL, publishTo, SHELL_ENV, stop, useProjectCopy } from "../support/project-copy";
import { useReceiver } from "../support/receiver";
import { request } from "../support/service";

const copy = useProjectCopy();
const { start, command, serverPid } = copy;
const receiver = useReceiver();

describe("beside a running service", () => {
  it("dispatch token create uses its cluster, and the service accepts the token at once; no warning is printed", async () => {
    const service = await start();
    const postgres = serverPid();
    const created = await command(["token", "create", "--name", "beside"]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe("");
    const secret = created.stdout.trim().split("\n")[1]!;
    const answer = await request(`${service.url}/v2/queues`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(answer.status).toBe(200);
    const results = await Promise.all([["token", "list"], ["keys"], ["migrate"], ["env"]].map((args) => command(args)));
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe("");
    }
    // The same cluster all along.
    expect(serverPid()).toBe(postgres);
  });

  it("a second dispatch start on a taken port says so in one line and exits 1 at once, leaving the first and its cluster as they were", async () => {
    const first = await start([], ALLOW_LOCAL);
    const postgres = serverPid()!;
    const port = new URL(first.url).port;
    const second = copy.spawnIn(process.execPath, ["bin/dispatch.js", "start"], { ...SHELL_ENV, PORT: port, HOST: "127.0.0.1" }, { group: false });
    const code = await new Promise<number | null>((resolve) => second.child.once("exit", (exitCode) => resolve(exitCode)));
    const output = second.output();
    expect(code, output).toBe(1);
    expect(output.trim().split("\n").filter((line) => /cannot listen/.test(line))).toEqual([
      `dispatch: cannot listen on 127.0.0.1:${port}: the address is in use (another Dispatch, or another program); set PORT to a free port, or stop the one using it`,
    ]);
    expect(output).not.toMatch(/uncaughtException|EADDRINUSE|at .*\.js:\d+/);
    // The first serves on, on the same cluster.
    expect(isAlive(postgres)).toBe(true);
    expect(serverPid()).toBe(postgres);
    expect((await request(`${first.url}/health`)).status).toBe(200);
    expect((await publishTo(first, `/v2/publish/${receiver.url}/after-refused-start`, { body: "x" })).status).toBe(200);
  });

  it("a second dispatch start joins the cluster; either can stop first, and the last one stops Postgres", async () => {
    const first = await start([], ALLOW_LOCAL);
    const second = await start(["start"], ALLOW_LOCAL);
    expect(second.output()).toMatch(/joined the cluster in .* that Dispatch process \d+ runs/);
    const postgres = serverPid()!;
    await stop(first.child);
    const before = receiver.requests.length;
    expect((await publishTo(second, `/v2/publish/${receiver.url}/after-first`, { body: "x" })).status).toBe(200);
    await receiver.waitFor(before + 1);
    await stop(second.child);
    expect(isAlive(postgres)).toBe(false);
  });
});

describe("the first message", () => {
  it("the banner's QSTASH_URL and dispatch env configure the official SDK, and its Try it is delivered without internet", async () => {
    const service = await start();
    // Its output is not a terminal: no secret is printed, and the banner says where to get them.
    expect(service.output()).not.toContain(service.token);
    expect(service.output()).toMatch(/Token:\s+\(not shown: npx dispatch env prints it\)/);
    const url = service.output().match(/^\s+QSTASH_URL=(\S+)$/m)![1]!;
    const printed = (await command(["env"])).stdout.trim().split("\n").slice(1);
    const env = Object.fromEntries([`QSTASH_URL=${url}`, ...printed].map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
    expect(Object.keys(env).sort()).toEqual(["QSTASH_CURRENT_SIGNING_KEY", "QSTASH_NEXT_SIGNING_KEY", "QSTASH_TOKEN", "QSTASH_URL"]);
    expect(env.QSTASH_TOKEN).toBe(service.token);
    // The README's five lines, with those variables.
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN! });
    const { messageId } = await client.publishJSON({ url: `${env.QSTASH_URL}/echo`, body: { hello: "world" } });
    await poll(() => service.output().includes(`echo: message ${messageId} arrived`), "the echo line");
    // The banner's curl, as printed, with $QSTASH_TOKEN set.
    const curl = service.output().match(/curl -X POST '([^']+)'/)![1]!;
    expect(service.output()).toContain('-H "Authorization: Bearer $QSTASH_TOKEN"');
    const answer = await request(curl, { method: "POST", headers: { Authorization: `Bearer ${env.QSTASH_TOKEN}`, "Content-Type": "application/json" }, body: '{"hello":"world"}' });
    const { messageId: tried } = await answer.json();
    await poll(() => service.output().includes(`echo: message ${tried} arrived`), "the echo line of the banner's curl");
  });
});

describe("the SSRF guard on the default path", () => {
  it("is on with the embedded database: IP literals that are not public are a 400, a name that resolves to one fails unsent with a generic reason, /echo is let through", async () => {
    // HOST unset: the embedded default listens on 127.0.0.1 only.
    const service = await start([], { HOST: "", DISPATCH_LOG_LEVEL: "debug" });
    expect(service.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(service.output()).not.toContain("SSRF guard");
    const before = receiver.requests.length;
    for (const destination of [`http://127.0.0.1:${receiver.port}/x`, "http://169.254.169.254/latest/meta-data/", `http://[2002:7f00:1::]:${receiver.port}/x`]) {
      const answer = await publishTo(service, `/v2/publish/${destination}`, { body: "x" });
      expect(answer.status).toBe(400);
      expect((await answer.json()).error).toMatch(/is not a public address .*DISPATCH_ALLOW_PRIVATE_NETWORKS=true/);
    }
    const callback = await publishTo(service, `/v2/publish/${service.url}/echo`, { body: "x", headers: { "Svc-Callback": "http://10.0.0.1/cb" } });
    expect(callback.status).toBe(400);
    expect((await callback.json()).error).toMatch(/^callback 10\.0\.0\.1 is not a public address/);

    const named = await publishTo(service, `/v2/publish/http://localhost:${receiver.port}/x`, { body: "x", headers: { "Svc-Retries": "0" } });
    expect(named.status).toBe(200);
    const { messageId } = await named.json();
    const failed = await poll(async () => {
      const logs = await request(`${service.url}/v2/logs?messageId=${messageId}`, { headers: { Authorization: `Bearer ${service.token}` } });
      const entries = (await logs.json()).logs as { state: string; error?: string }[];
      return entries.some((entry) => entry.state === "FAILED") && entries.find((entry) => entry.state === "ERROR")!;
    }, "the message to fail");
    expect(failed.error).toMatch(/^destination localhost refused: it is not, or does not resolve to, a public address/);
    expect(failed.error).not.toMatch(/127\.0\.0\.1|::1/);
    expect(service.output()).toMatch(/destination localhost refused: (127\.0\.0\.1|::1) is not a public address/);

    const echoed = await publishTo(service, `/v2/publish/${service.url}/echo`, { body: "x" });
    const { messageId: echoId } = await echoed.json();
    await poll(() => service.output().includes(`echo: message ${echoId} arrived`), "the echo line");
    expect(receiver.requests.length).toBe(before);
  });

  it("is off when DISPATCH_ALLOW_PRIVATE_NETWORKS=true, and the banner says so", async () => {
    const service = await start([], ALLOW_LOCAL);
    expect(service.output()).toMatch(/SSRF guard:\s+off/);
    const before = receiver.requests.length;
    expect((await publishTo(service, `/v2/publish/http://127.0.0.1:${receiver.port}/open`, { body: "x" })).status).toBe(200);
    await receiver.waitFor(before + 1);
  });
});
