/**
 * The README's path for a team coming from the hosted service, run as the
 * README shows it (issue 35, items 4 and 5): `npm start` in a fresh copy of
 * the project, `dispatch env > .env` in an app folder of its own, and the
 * README's four files (publish.mjs, receiver.mjs, workflow.mjs,
 * trigger.mjs), taken from README.md as printed and run with
 * `node --env-file=.env`, the official SDKs installed: a publish reaches
 * /echo, a curl-style publish (no prefixed header) is verified by the SDK's
 * Receiver, and a workflow served by plain Node runs to its end. Then the
 * same files with only `QSTASH_DEV=true` against `DISPATCH_QSTASH_DEV=true`,
 * whose data outlives a restart. The only change to a file is its port
 * (3000, 3001 → free ones). Each app is preloaded with a guard that lets its
 * sockets reach this machine only: the SDKs' dev mode downloads a server
 * when it finds none, which a test must never do.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { QSTASH_DEV_CREDENTIALS } from "../src/config/qstash-dev";
import { poll } from "./support/poll";
import { type Running, SHELL_ENV, stop, useProjectCopy } from "./support/project-copy";
import { request } from "./support/service";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const GUARD = join(ROOT, "test", "support", "loopback-only.cjs");
const copy = useProjectCopy();
let app = "";
const apps = new Set<ChildProcess>();

beforeAll(() => {
  // `npm init -y && npm install @upstash/qstash @upstash/workflow`: this project's copies, linked.
  app = mkdtempSync(join(tmpdir(), "dispatch-app-"));
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-app", version: "1.0.0" }));
  symlinkSync(join(ROOT, "node_modules"), join(app, "node_modules"));
});
afterEach(async () => {
  for (const child of apps) child.kill("SIGKILL");
  await poll(() => [...apps].every((child) => child.exitCode !== null || child.signalCode !== null), "every app gone");
  apps.clear();
});
afterAll(() => rmSync(app, { recursive: true, force: true }));

/** The README's file `name`: the ```js block whose first line is `// <name> — run: ...`, ports 3000 and 3001 moved to `ports`. */
function readmeFile(name: string, ports: Record<string, number> = {}): string {
  const blocks = [...readFileSync(join(ROOT, "README.md"), "utf8").matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const block = blocks.find((text) => text.startsWith(`// ${name} — run: node --env-file=.env ${name}\n`));
  if (block === undefined) throw new Error(`README.md has no js block for ${name}`);
  return Object.entries(ports).reduce((text, [from, to]) => text.replaceAll(from, String(to)), block);
}

/** A free port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** An app file started as `node --env-file=.env <name>` (or with `env` only, in dev mode), with what it prints. */
function startApp(name: string, text: string, env: Record<string, string> | ".env") {
  writeFileSync(join(app, name), text);
  const args = env === ".env" ? ["--require", GUARD, "--env-file=.env", name] : ["--require", GUARD, name];
  const child = spawn(process.execPath, args, { cwd: app, env: { ...SHELL_ENV, ...(env === ".env" ? {} : env) }, stdio: ["ignore", "pipe", "pipe"] });
  apps.add(child);
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { output: () => output, exited };
}

/** Runs an app file to its end; its output, once it exited 0. */
async function runApp(name: string, text: string, env: Record<string, string> | ".env"): Promise<string> {
  const started = startApp(name, text, env);
  const code = await started.exited;
  expect(code, started.output()).toBe(0);
  return started.output();
}

/** Waits until something listens on `port` (an app server started). */
const listening = (port: number) => poll(async () => (await request(`http://127.0.0.1:${port}/`, { method: "HEAD" }).catch(() => null)) !== null, `a server on ${port}`);

/** The README's curl: a publish with no prefixed header (curl -d sends a form content type). */
const curlPublish = (running: Running, destination: string, body: string) =>
  request(`${running.url}/v2/publish/${destination}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${running.token}`, "Content-Type": "application/x-www-form-urlencoded" },
    body,
  });

/** The run's state in the workflow logs. */
async function runState(running: Running, runId: string): Promise<string | undefined> {
  const answer = await request(`${running.url}/v2/workflows/logs?workflowRunId=${runId}`, { headers: { Authorization: `Bearer ${running.token}` } });
  return ((await answer.json()).runs as { workflowRunId: string; workflowState: string }[]).find((run) => run.workflowRunId === runId)?.workflowState;
}

/** Serves workflow.mjs, triggers it with trigger.mjs, and waits for the run's receipt and its end. */
async function runWorkflow(running: Running, env: Record<string, string> | ".env"): Promise<string> {
  const port = await freePort();
  const served = startApp("workflow.mjs", readmeFile("workflow.mjs", { "3001": port }), env);
  await listening(port);
  const runId = (await runApp("trigger.mjs", readmeFile("trigger.mjs", { "3001": port }), env)).trim().split("\n").at(-1)!;
  expect(runId).toMatch(/^wfr_/);
  await poll(() => served.output().includes(`run ${runId}: charged 42`), () => `workflow.mjs's receipt:\n${served.output()}`);
  await poll(async () => (await runState(running, runId)) === "RUN_SUCCESS", "the run to succeed");
  return runId;
}

/** Starts receiver.mjs, publishes to it as the README's curl does, and waits for its verified line; the message id. */
async function curlToReceiver(running: Running, env: Record<string, string> | ".env"): Promise<string> {
  const port = await freePort();
  const receiver = startApp("receiver.mjs", readmeFile("receiver.mjs", { "3000": port }), env);
  await listening(port);
  // Unsigned, straight to it: refused.
  expect((await request(`http://127.0.0.1:${port}/orders`, { method: "POST", body: "forged" })).status).toBe(401);
  const answer = await curlPublish(running, `http://127.0.0.1:${port}/orders`, '{"order":1}');
  expect(answer.status).toBe(200);
  await poll(() => receiver.output().includes('verified: {"order":1}'), () => `receiver.mjs's line:\n${receiver.output()}`);
  expect(receiver.output()).toContain("refused: not signed by Dispatch");
  return (await answer.json()).messageId;
}

describe("the README's first app", () => {
  it("dispatch env > .env, then publish.mjs, receiver.mjs with a curl publish, and workflow.mjs with trigger.mjs, as shown", { timeout: 150_000 }, async () => {
    const running = await copy.start([], { DISPATCH_ALLOW_PRIVATE_NETWORKS: "true", DISPATCH_DEFAULT_DIALECT: "upstash" });
    const env = await copy.command(["env"], { PORT: new URL(running.url).port });
    expect(env.code, env.stderr).toBe(0);
    expect(env.stdout).toContain(`QSTASH_URL=${running.url}\n`);
    writeFileSync(join(app, ".env"), env.stdout);

    const messageId = (await runApp("publish.mjs", readmeFile("publish.mjs"), ".env")).trim();
    expect(messageId).toMatch(/^msg_/);
    await poll(() => running.output().includes(`echo: message ${messageId} arrived`), "the echo line");

    await curlToReceiver(running, ".env");
    await runWorkflow(running, ".env");
    await stop(running.child);
  });
});

describe("the SDKs' dev mode", () => {
  it("serves an app that sets only QSTASH_DEV=true (its receiver verifies, its workflow runs), and keeps its data across a restart", { timeout: 150_000 }, async () => {
    const first = await copy.start([], { DISPATCH_QSTASH_DEV: "true" });
    expect(first.output()).toContain(`Token:               ${QSTASH_DEV_CREDENTIALS.token}`);
    const env = { QSTASH_DEV: "true", QSTASH_DEV_PORT: new URL(first.url).port };
    const messageId = await curlToReceiver(first, env);
    const runId = await runWorkflow(first, env);
    await stop(first.child);

    const second = await copy.start([], { DISPATCH_QSTASH_DEV: "true" });
    const message = await request(`${second.url}/v2/messages/${messageId}`, { headers: { Authorization: `Bearer ${second.token}` } });
    expect(message.status).toBe(200);
    expect(await runState(second, runId)).toBe("RUN_SUCCESS");
    await stop(second.child);
  });

  it("is refused in one line with a listener others reach, exiting 1", async () => {
    const refused = await copy.command(["start"], { DISPATCH_QSTASH_DEV: "true", HOST: "0.0.0.0", PORT: "0" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("DISPATCH_QSTASH_DEV uses the SDKs' public development credentials, so it listens on loopback only");
    expect(refused.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});
