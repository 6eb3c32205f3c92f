/**
 * Native-dialect request signatures: every delivery carries `Svc-Signature`,
 * an HS256 JWT a receiver verifies with a standard JWT library and the UTF-8
 * bytes of Dispatch's current signing key.
 */
import { createHash } from "node:crypto";
import { decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { type Received, type Receiver, startReceiver } from "./support/receiver";
import { useDispatch } from "./support/service";

const dispatch = useDispatch();
const receivers: Receiver[] = [];

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function destination(): Promise<Receiver> {
  const receiver = await startReceiver();
  receivers.push(receiver);
  return receiver;
}

/** Publishes natively to `url` and returns what the destination got. */
async function deliver(
  target: Receiver,
  path: string,
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<{ got: Received; messageId: string; url: string }> {
  const response = await dispatch.api(`/v2/publish/${target.url}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    ...(body !== undefined && { body }),
  });
  expect(response.status).toBe(200);
  const { messageId, url } = (await response.json()) as { messageId: string; url: string };
  const [got] = await target.waitFor(1);
  return { got: got!, messageId, url };
}

const secret = (key: string) => new TextEncoder().encode(key);
const sha256Base64url = (data: Buffer | string) => createHash("sha256").update(data).digest("base64url");
const signatureOf = (got: Received) => got.headers["svc-signature"] as string;

describe("native Svc-Signature", () => {
  it("is an HS256 JWT from issuer Dispatch over the exact destination URL and the received body", async () => {
    const target = await destination();
    const body = JSON.stringify({ amount: "12.50", note: "café ✓" });
    const { got, messageId, url } = await deliver(target, "/hooks/payment?id=7&x=a%20b", body, {
      "Svc-Forward-X-Trace": "abc",
    });
    expect(got.headers["svc-message-id"]).toBe(messageId);
    const signature = signatureOf(got);
    expect(signature).toBeTruthy();

    const { payload, protectedHeader } = await jwtVerify(signature, secret(dispatch.service.signingKeys.current), {
      issuer: "Dispatch",
      subject: url,
      algorithms: ["HS256"],
    });
    expect(protectedHeader).toMatchObject({ alg: "HS256", typ: "JWT" });
    expect(payload.sub).toBe(`${target.url}/hooks/payment?id=7&x=a%20b`);
    expect(payload.sub).toBe(target.url + got.path);
    expect(payload.body).toBe(sha256Base64url(got.body));
    expect(got.body.toString()).toBe(body);
    expect(payload.exp! - payload.iat!).toBe(300);
    expect(typeof payload.nbf).toBe("number");
    expect(payload.jti).toMatch(/^jwt_/);
  });

  it("is sent with user-agent Dispatch and only native headers", async () => {
    const target = await destination();
    const { got } = await deliver(target, "/ua", "{}");
    expect(got.headers["user-agent"]).toBe("Dispatch");
    expect(got.headers["svc-retried"]).toBe("0");
    expect(got.headers["upstash-signature"]).toBeUndefined();
    expect(got.headers["upstash-message-id"]).toBeUndefined();
  });

  it("does not verify with a key other than the current signing key", async () => {
    const target = await destination();
    const { got } = await deliver(target, "/wrong-key", '{"a":1}');
    await expect(jwtVerify(signatureOf(got), secret("sig_notTheSigningKey"), { issuer: "Dispatch" })).rejects.toThrow();
  });

  it("is not an Upstash-issued token, so compat verifiers do not accept native deliveries", async () => {
    const target = await destination();
    const { got } = await deliver(target, "/issuer", '{"a":1}');
    await expect(
      jwtVerify(signatureOf(got), secret(dispatch.service.signingKeys.current), { issuer: "Upstash" }),
    ).rejects.toThrow();
  });

  it("binds the body: the claim differs from the hash of any other body", async () => {
    const target = await destination();
    const { got } = await deliver(target, "/tamper", '{"amount":"12.50"}');
    const claims = decodeJwt(signatureOf(got));
    expect(claims.body).toBe(sha256Base64url(got.body));
    expect(claims.body).not.toBe(sha256Base64url('{"amount":"1250.00"}'));
  });

  it("covers an empty body with the SHA-256 of the empty string", async () => {
    const target = await destination();
    const { got, url } = await deliver(target, "/empty", undefined);
    expect(got.body.length).toBe(0);
    const { payload } = await jwtVerify(signatureOf(got), secret(dispatch.service.signingKeys.current), {
      issuer: "Dispatch",
      subject: url,
    });
    expect(payload.body).toBe(sha256Base64url(""));
  });

  it("a GET delivery, which carries no body, is signed over the empty body it actually sends", async () => {
    const target = await destination();
    const { got, url } = await deliver(target, "/get", "stored but not sent", { "Svc-Method": "GET" });
    expect(got.method).toBe("GET");
    expect(got.body.length).toBe(0);
    const { payload } = await jwtVerify(signatureOf(got), secret(dispatch.service.signingKeys.current), {
      issuer: "Dispatch",
      subject: url,
    });
    expect(payload.body).toBe(sha256Base64url(got.body));
  });

  it("signs each retry afresh for the same URL and body", async () => {
    const target = await destination();
    target.respond((_request, index) => ({ status: index === 0 ? 503 : 200 }));
    const response = await dispatch.api(`/v2/publish/${target.url}/retry`, {
      method: "POST",
      headers: { "Content-Type": "text/plain", "Svc-Retries": "1" },
      body: "again",
    });
    expect(response.status).toBe(200);
    const attempts = await target.waitFor(2);
    expect(attempts.map((r) => r.headers["svc-retried"])).toEqual(["0", "1"]);
    const key = secret(dispatch.service.signingKeys.current);
    const verified = await Promise.all(
      attempts.map((r) => jwtVerify(signatureOf(r), key, { issuer: "Dispatch", subject: `${target.url}/retry` })),
    );
    for (const { payload } of verified) expect(payload.body).toBe(sha256Base64url("again"));
    expect(verified[0]!.payload.jti).not.toBe(verified[1]!.payload.jti);
    expect(decodeProtectedHeader(signatureOf(attempts[1]!)).alg).toBe("HS256");
  });
});
