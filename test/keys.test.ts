/**
 * Signing keys: read them, rotate them (next becomes current, a fresh key
 * becomes next), and deliveries after a rotation are signed with the new
 * current key — which receivers still holding the old pair accept, because
 * it was their next key.
 */
import { Receiver as SignatureReceiver, SignatureError } from "@upstash/qstash";
import { describe, expect, it } from "vitest";
import { poll } from "./support/poll";
import { type Received, useReceiver } from "./support/receiver";
import { startTestService, type TestService, useDispatch } from "./support/service";

const dispatch = useDispatch();
const receiver = useReceiver();

const keys = async () => (await (await dispatch.api("/v2/keys")).json()) as { current: string; next: string };
const rotate = async (path = "/v2/keys/rotate") => {
  const response = await dispatch.api(path, { method: "POST" });
  expect(response.status).toBe(200);
  return (await response.json()) as { current: string; next: string };
};
const verifier = (pair: { current: string; next: string }) =>
  new SignatureReceiver({ currentSigningKey: pair.current, nextSigningKey: pair.next, devMode: false });

describe("signing keys", () => {
  it("GET /v2/keys shows the pair in force", async () => {
    const pair = await keys();
    expect(pair).toEqual({ current: expect.stringMatching(/^sig_\w{28}$/), next: expect.stringMatching(/^sig_\w{28}$/) });
    expect(pair).toEqual(dispatch.service.signingKeys);
  });

  it("rotate makes next the current key and a fresh key the next, and persists it", async () => {
    const before = await keys();
    const after = await rotate();
    expect(after.current).toBe(before.next);
    expect(after.next).toMatch(/^sig_\w{28}$/);
    expect(after.next).not.toBe(before.current);
    expect(after.next).not.toBe(before.next);
    expect(await keys()).toEqual(after);
    // The Go SDK's path does the same.
    const again = await rotate("/v2/rotate");
    expect(again.current).toBe(after.next);
  });

  it("concurrent rotations chain: none is lost", async () => {
    const before = await keys();
    const [a, b] = await Promise.all([rotate(), rotate()]);
    const [first, second] = a!.current === before.next ? [a!, b!] : [b!, a!];
    expect(first.current).toBe(before.next);
    expect(second.current).toBe(first.next);
    expect(await keys()).toEqual(second);
  });

  it("deliveries after a rotation are signed with the new current key, which the old pair still accepts", async () => {
    const old = await keys();
    const rotated = await rotate();
    const requestOf = (got: Received) => ({
      signature: got.headers["upstash-signature"] as string,
      body: got.body.toString(),
      url: `${receiver.url}/signed`,
    });
    const newKeyOnly = verifier({ current: rotated.current, next: rotated.current });
    // The worker hears of the rotation by NOTIFY, so a delivery that raced it may still carry the old key.
    const request = await poll(async () => {
      const before = receiver.requests.length;
      const published = await dispatch.api(`/v2/publish/${receiver.url}/signed`, {
        method: "POST",
        headers: { "Upstash-Retries": "0", "Content-Type": "text/plain" },
        body: "signed after rotation",
      });
      expect(published.status).toBe(200);
      const [latest] = (await receiver.waitFor(before + 1)).slice(before).map(requestOf);
      return (await newKeyOnly.verify(latest!).catch(() => false)) && latest!;
    }, "a delivery signed with the rotated current key");
    await expect(verifier(rotated).verify(request)).resolves.toBe(true);
    // A receiver configured before the rotation: its next key is the new current one.
    await expect(verifier(old).verify(request)).resolves.toBe(true);
    // The retired key alone does not verify it.
    await expect(verifier({ current: old.current, next: old.current }).verify(request)).rejects.toBeInstanceOf(SignatureError);
  });
});

describe("configured signing keys", () => {
  it("cannot be rotated through the API: 409 naming the variables, keys unchanged", async () => {
    const configured = { current: "sig_configuredCurrent000000000000", next: "sig_configuredNext00000000000000" };
    const service = await startTestService(
      { currentSigningKey: configured.current, nextSigningKey: configured.next },
      { role: "api" },
    );
    try {
      const api = (path: string, init?: RequestInit) => service.api(path, init);
      const response = await api("/v2/keys/rotate", { method: "POST" });
      expect(response.status).toBe(409);
      expect((await response.json()).error).toMatch(/DISPATCH_CURRENT_SIGNING_KEY.*DISPATCH_NEXT_SIGNING_KEY/);
      expect(await (await api("/v2/keys")).json()).toEqual(configured);
    } finally {
      await service.stop();
    }
  });
});
