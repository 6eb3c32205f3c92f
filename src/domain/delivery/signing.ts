/**
 * Request signatures: an HS256 JWT over the delivered body (docs/hosted-api.md §10).
 *
 * The HMAC key is the UTF-8 bytes of the signing key string itself, `sig_`
 * included; receivers holding the current and the next key keep verifying
 * across a rotation.
 */
import { createHmac, hash } from "node:crypto";
import { newJwtId } from "../ids";

/** The signing key pair in force. */
export interface SigningKeys {
  current: string;
  next: string;
}

/** JWT lifetime, as the hosted service uses. */
const LIFETIME_SECONDS = 300;

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

/** base64url SHA-256 of a body: the JWT's `body` claim (one-shot `hash`: no Hash object per delivery). */
export function bodyHash(body: Uint8Array | string): string {
  return hash("sha256", body, "base64url");
}

const HEADER = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));

/** What a signature covers. */
export interface SignedRequest {
  /** `iss` claim: the dialect's issuer (`Upstash` in the compat dialect, which its SDKs require). */
  issuer: string;
  /** `sub` claim: the exact URL the request is sent to. */
  url: string;
  body: Uint8Array | string;
}

/**
 * Signs a request with `key`. `nbf` is 0 so receivers with a skewed clock
 * still accept it (docs/hosted-api.md §16 #21).
 */
export function signRequest(key: string, { issuer, url, body }: SignedRequest, now = Date.now()): string {
  const iat = Math.floor(now / 1000);
  const header = HEADER;
  const claims = base64url(
    JSON.stringify({
      iss: issuer,
      sub: url,
      exp: iat + LIFETIME_SECONDS,
      nbf: 0,
      iat,
      jti: newJwtId(),
      body: bodyHash(body),
    }),
  );
  const signature = createHmac("sha256", key).update(`${header}.${claims}`).digest("base64url");
  return `${header}.${claims}.${signature}`;
}
