/**
 * Each project signs with its own key pair: a delivery verifies with its
 * project's keys (the official Receiver, as a receiver holding
 * QSTASH_CURRENT_SIGNING_KEY/NEXT does) and fails another project's; reading
 * and rotating the keys concern the token's project only.
 */
import { Receiver as SignatureReceiver, SignatureError } from "@upstash/qstash";
import { expect, it } from "vitest";
import { useProject } from "../support/projects";
import { type Received, useReceiver } from "../support/receiver";
import { useDispatch } from "../support/service";

const dispatch = useDispatch();
const acme = useProject(dispatch, "acme");
const receiver = useReceiver();

type Api = typeof dispatch.api;
type Pair = { current: string; next: string };
const keysOf = async (api: Api): Promise<Pair> => (await (await api("/v2/keys")).json()) as Pair;
const verifier = (pair: Pair) => new SignatureReceiver({ currentSigningKey: pair.current, nextSigningKey: pair.next });

/** Publishes through `api` and returns what the receiver got, as a Receiver checks it. */
async function delivered(api: Api, path: string) {
  const before = receiver.requests.length;
  const published = await api(`/v2/publish/${receiver.url}/${path}`, {
    method: "POST",
    headers: { "Upstash-Retries": "0", "Content-Type": "text/plain" },
    body: `for ${path}`,
  });
  expect(published.status).toBe(200);
  const got = (await receiver.waitFor(before + 1)).find((request) => request.path === `/${path}`) as Received;
  return { signature: got.headers["upstash-signature"] as string, body: got.body.toString(), url: `${receiver.url}/${path}` };
}

it("signs each project's deliveries with its own pair, which another project's keys do not verify", async () => {
  const [ours, theirs] = [await keysOf(dispatch.api), await keysOf(acme.api)];
  expect(ours).toEqual(dispatch.service.signingKeys);
  expect(theirs).toEqual({ current: expect.stringMatching(/^sig_\w{28}$/), next: expect.stringMatching(/^sig_\w{28}$/) });
  expect([theirs.current, theirs.next]).not.toContain(ours.current);
  expect(await keysOf(acme.api)).toEqual(theirs);

  const acmeDelivery = await delivered(acme.api, "acme");
  await expect(verifier(theirs).verify(acmeDelivery)).resolves.toBe(true);
  await expect(verifier(ours).verify(acmeDelivery)).rejects.toBeInstanceOf(SignatureError);
  const defaultDelivery = await delivered(dispatch.api, "default");
  await expect(verifier(ours).verify(defaultDelivery)).resolves.toBe(true);
  await expect(verifier(theirs).verify(defaultDelivery)).rejects.toBeInstanceOf(SignatureError);
});

it("rotates the token's project's pair only", async () => {
  const [ours, theirs] = [await keysOf(dispatch.api), await keysOf(acme.api)];
  const rotated = await acme.api("/v2/keys/rotate", { method: "POST" });
  expect(rotated.status).toBe(200);
  const after = (await rotated.json()) as Pair;
  expect(after.current).toBe(theirs.next);
  expect(await keysOf(acme.api)).toEqual(after);
  expect(await keysOf(dispatch.api)).toEqual(ours);
  // A delivery after the rotation is signed with acme's old current key or (once the worker heard the
  // rotation's NOTIFY) its new one, the old pair's next: a receiver holding acme's old pair accepts either;
  // the default project's keys accept neither.
  const next = await delivered(acme.api, "acme-after");
  await expect(verifier(theirs).verify(next)).resolves.toBe(true);
  await expect(verifier(ours).verify(next)).rejects.toBeInstanceOf(SignatureError);
});
