/**
 * A running process logs JSON lines (pino) on stderr, and nothing it prints
 * carries a secret: not its access token, not its signing keys, not a
 * forwarded Authorization header of a message it delivered.
 */
import { afterEach, expect, it } from "vitest";
import { cloneDatabase } from "./support/database";
import { killAllDispatchProcesses, startDispatchProcess } from "./support/processes";
import { startReceiver } from "./support/receiver";
import { request } from "./support/service";

afterEach(() => killAllDispatchProcesses());

it("logs JSON lines and never a token, a signing key or a forwarded Authorization", async () => {
  const secrets = {
    token: "configured-secret-token-0123456789",
    current: "sig_secretCurrentKey000000000000",
    next: "sig_secretNextKey0000000000000000",
    forwarded: "Bearer downstream-secret-0123456789",
  };
  const receiver = await startReceiver();
  try {
    const service = await startDispatchProcess("all", {
      DATABASE_URL: await cloneDatabase(),
      DISPATCH_TOKEN: secrets.token,
      DISPATCH_CURRENT_SIGNING_KEY: secrets.current,
      DISPATCH_NEXT_SIGNING_KEY: secrets.next,
      DISPATCH_ALLOW_PRIVATE_NETWORKS: "true",
      DISPATCH_LOG_LEVEL: "debug",
    });
    const url = service.output().match(/URL:\s+(\S+)/)![1];
    const published = await request(`${url}/v2/publish/${receiver.url}/secret`, {
      method: "POST",
      headers: { Authorization: `Bearer ${secrets.token}`, "Svc-Forward-Authorization": secrets.forwarded },
      body: "hello",
    });
    expect(published.status).toBe(200);
    const { messageId } = await published.json();
    const [got] = await receiver.waitFor(1);
    expect(got!.headers.authorization).toBe(secrets.forwarded);
    expect(await service.terminate()).toBe(0);

    const output = service.output();
    for (const secret of Object.values(secrets)) expect(output).not.toContain(secret.replace(/^Bearer /, ""));
    const lines = output.split("\n").filter((line) => line.startsWith("{"));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ level: expect.any(Number), msg: expect.any(String), service: "dispatch" });
    expect(lines.map((line) => JSON.parse(line).msg)).toEqual(expect.arrayContaining(["SIGTERM: stopping (finishing in-flight deliveries)", "stopped"]));
    // At debug level, the request's line carries its id and the delivery's line the message's.
    const entries = lines.map((line) => JSON.parse(line));
    const requestLine = { requestId: published.headers.get("x-request-id"), msg: expect.stringMatching(/^POST \/v2\/publish\/\* 200 in /) };
    expect(entries).toContainEqual(expect.objectContaining(requestLine));
    const attemptLine = { messageId, msg: expect.stringMatching(new RegExp(`^attempt of ${messageId}: status 200 in \\d+ ms$`)) };
    expect(entries).toContainEqual(expect.objectContaining(attemptLine));
  } finally {
    await receiver.close();
  }
});
